"""Real-world case 583.

Source: https://github.com/lightly-ai/lightly-train/pull/434
Bug: a knowledge-distillation wrapper keeps the teacher as a sub-model whose
parameters are not frozen, and its train step differentiates the loss with
respect to all of the wrapper's trainable variables, teacher included. The
teacher runs outside the tape (it only produces soft targets), so its weights
get no gradient: Keras warns "Gradients do not exist for variables" for every
teacher weight on every step (the PR: teacher parameters counted as trainable
although the teacher is never optimized).
Setting: teacher-student distillation, Keras 3 subclassed Model with a custom train_step, model.fit.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class Distiller(keras.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.teacher = teacher
        self.student = student

    def compile(self, optimizer, student_loss_fn, distillation_loss_fn, alpha=0.1, temperature=3):
        super().compile(optimizer=optimizer)
        self.student_loss_fn = student_loss_fn
        self.distillation_loss_fn = distillation_loss_fn
        self.alpha = alpha
        self.temperature = temperature

    def call(self, x):
        return self.student(x)

    def train_step(self, data):
        x, y = data
        teacher_predictions = self.teacher(x, training=False)
        with tf.GradientTape() as tape:
            student_predictions = self.student(x, training=True)
            student_loss = self.student_loss_fn(y, student_predictions)
            distillation_loss = self.distillation_loss_fn(
                tf.nn.softmax(teacher_predictions / self.temperature, axis=1),
                tf.nn.softmax(student_predictions / self.temperature, axis=1),
            ) * self.temperature ** 2
            loss = self.alpha * student_loss + (1 - self.alpha) * distillation_loss
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        return {"student_loss": student_loss, "distillation_loss": distillation_loss}


teacher = keras.Sequential([keras.Input((16,)), layers.Dense(64, activation="relu"), layers.Dense(10)],
                           name="teacher")
student = keras.Sequential([keras.Input((16,)), layers.Dense(16, activation="relu"), layers.Dense(10)],
                           name="student")
rng = np.random.default_rng(0)
x_train = rng.normal(size=(256, 16)).astype("float32")
y_train = rng.integers(0, 10, size=256)

distiller = Distiller(student=student, teacher=teacher)
distiller.compile(
    optimizer=keras.optimizers.Adam(),
    student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    distillation_loss_fn=keras.losses.KLDivergence(),
    alpha=0.1,
    temperature=10,
)
history = distiller.fit(x_train, y_train, epochs=2, batch_size=64, verbose=0)
print("distillation loss:", history.history["distillation_loss"])
