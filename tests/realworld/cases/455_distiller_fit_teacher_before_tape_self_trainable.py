"""Real-world case 455.

Source: https://keras.io/examples/vision/knowledge_distillation/ (adapted by users to `self.trainable_variables`)
Bug: a knowledge-distillation `Distiller(keras.Model)` runs the frozen teacher before the
tape, as the tutorial does, but asks for the gradients of `self.trainable_variables`, which
holds the teacher's variables too (the teacher was never marked `trainable = False`). The
teacher's forward pass ran before the tape recorded, so its variables get None on every
step; Keras warns.
Setting: Keras 3, model.fit with a custom train_step (tf.function), teacher built before fit.
"""
import keras
import numpy as np
import tensorflow as tf


def make(name, width):
    return keras.Sequential(
        [keras.Input((6,)), keras.layers.Dense(width, activation="relu"), keras.layers.Dense(3)], name=name
    )


class Distiller(keras.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.teacher = teacher
        self.student = student

    def compile(self, optimizer, temperature=3.0, alpha=0.1):
        super().compile(optimizer=optimizer)
        self.temperature, self.alpha = temperature, alpha
        self.student_loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.distillation_loss_fn = keras.losses.KLDivergence()

    def train_step(self, data):
        x, y = data
        teacher_predictions = self.teacher(x, training=False)
        with tf.GradientTape() as tape:
            student_predictions = self.student(x, training=True)
            student_loss = self.student_loss_fn(y, student_predictions)
            distillation_loss = self.distillation_loss_fn(
                tf.nn.softmax(teacher_predictions / self.temperature, axis=1),
                tf.nn.softmax(student_predictions / self.temperature, axis=1),
            )
            loss = self.alpha * student_loss + (1 - self.alpha) * distillation_loss
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        return {"loss": loss}


teacher = make("teacher", 32)
student = make("student", 8)
x = np.random.rand(64, 6).astype("float32")
y = np.random.randint(0, 3, size=(64,))
teacher.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
teacher.fit(x, y, epochs=1, verbose=0)

distiller = Distiller(student=student, teacher=teacher)
distiller.compile(optimizer=keras.optimizers.Adam())
distiller.fit(x, y, epochs=2, batch_size=16, verbose=0)
