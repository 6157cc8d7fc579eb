"""Clean control 776 (expected clean).

Twin of case 756: the same functional Mean Teacher, with the EMA of the
teacher's weights taken after the optimizer step, outside the GradientTape, as
in the reference implementation; the teacher forward inside the tape then uses
weights that carry no gradient path to the student, so the consistency target
is fixed for the step.
Setting: semi-supervised teacher-student (EMA teacher, consistency loss), functional stateless_call, eager tape, Keras 3.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers

rng = np.random.default_rng(0)
n_classes = 5
x_lab = rng.normal(size=(64, 20)).astype("float32")
y_lab = (x_lab[:, :n_classes].argmax(axis=1)).astype("int32")
x_unl = rng.normal(size=(256, 20)).astype("float32")

student = keras.Sequential([
    keras.Input((20,)),
    layers.Dense(32, activation="relu", name="hidden"),
    layers.Dense(n_classes, name="logits"),
], name="student")
optimizer = keras.optimizers.Adam(1e-2)
ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
ema_decay, consistency_weight = 0.9, 10.0
teacher_weights = [tf.identity(v) for v in student.trainable_variables]


def noisy(x):
    return x + tf.random.normal(tf.shape(x), stddev=0.3)


for step in range(20):
    idx = rng.integers(0, len(x_unl), size=64)
    x_u = tf.constant(x_unl[idx])
    with tf.GradientTape() as tape:
        class_loss = ce(y_lab, student(x_lab, training=True))
        student_u = student(noisy(x_u), training=True)
        teacher_u, _ = student.stateless_call(teacher_weights, student.non_trainable_variables, noisy(x_u))
        consistency = tf.reduce_mean(tf.square(tf.nn.softmax(student_u) - tf.nn.softmax(teacher_u)))
        loss = class_loss + consistency_weight * consistency
    grads = tape.gradient(loss, student.trainable_variables)
    optimizer.apply_gradients(zip(grads, student.trainable_variables))
    teacher_weights = [ema_decay * t + (1 - ema_decay) * s
                       for t, s in zip(teacher_weights, student.trainable_variables)]
print("class loss", float(class_loss), "consistency", float(consistency))
