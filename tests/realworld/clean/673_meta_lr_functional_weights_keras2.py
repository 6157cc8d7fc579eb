"""Clean control 673 (look-alike of case 273).

Source: https://github.com/tensorflow/tensorflow/issues/53541
Fix: the adapted weights are used functionally (a forward pass that takes
the weight tensors) instead of being loaded with set_weights, so the
validation loss stays a differentiable function of inner_lr and the
meta-gradient exists; inner_lr is learned.
Setting: meta-learning custom loop, Keras 2 (tf.keras), eager nested GradientTapes.
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)
np.random.seed(0)
learner = tf.keras.Sequential([
    tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
    tf.keras.layers.Dense(3, activation="softmax"),
])
inner_lr = tf.Variable(0.1, name="inner_lr")
meta_optimizer = tf.keras.optimizers.Adam(1e-2)
loss_fn = tf.keras.losses.CategoricalCrossentropy()


def forward(inputs, weights):
    w1, b1, w2, b2 = weights
    return tf.nn.softmax(tf.matmul(tf.nn.relu(tf.matmul(inputs, w1) + b1), w2) + b2)


x = np.random.randn(16, 4).astype("float32")
y = tf.one_hot(np.argmax(x[:, :3], axis=1), 3)
x_tr, y_tr, x_val, y_val = x[:8], y[:8], x[8:], y[8:]

for step in range(3):
    with tf.GradientTape() as outer_tape:
        with tf.GradientTape() as inner_tape:
            train_loss = loss_fn(y_tr, learner(x_tr))
        grads = inner_tape.gradient(train_loss, learner.trainable_weights)
        new_weights = [w - inner_lr * g for w, g in zip(learner.trainable_weights, grads)]
        val_loss = loss_fn(y_val, forward(x_val, new_weights))
    lr_grad = outer_tape.gradient(val_loss, inner_lr)
    print(step, float(val_loss), "d val_loss / d inner_lr:", lr_grad)
    if lr_grad is not None:
        meta_optimizer.apply_gradients([(lr_grad, inner_lr)])
