"""Real-world case 1086.

Source: https://github.com/Aaditya-Prasad/consistency-policy/issues/4
Bug: consistency-trajectory (CTM) distillation of a student from its EMA
teacher. The student's jump t -> s is computed on the tape, but the next
block, meant to keep only the teacher's targets out of the graph, also maps
the student's prediction to the start time with the EMA network and
overwrites `pred` inside the no-record block (PyTorch's `torch.no_grad()`,
here `tape.stop_recording()`). Both sides of the CTM loss are then
unrecorded constants: "this loss variable is not going to have grad_fn", and
with the CTM loss alone the optimizer raises "No gradients provided".
Setting: Keras 3 Sequential student + EMA teacher, custom training loop under @tf.function, teacher-student distillation.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(0)
DIM, BATCH, TIME_MIN = 6, 32, 0.002


def build_net(name):
    return keras.Sequential([
        keras.Input((DIM + 2,)),
        keras.layers.Dense(64, activation="silu"),
        keras.layers.Dense(64, activation="silu"),
        keras.layers.Dense(DIM),
    ], name=name)


model = build_net("student")
model_ema = build_net("student_ema")
model_ema.set_weights(model.get_weights())
model_ema.trainable = False
optimizer = keras.optimizers.Adam(1e-3)
huber = keras.losses.Huber(delta=1.0)


def forward(net, traj, times, stops):
    return net(tf.concat([traj, times, stops], axis=-1))


@tf.function
def train_step(trajectory):
    noise = tf.random.normal(tf.shape(trajectory))
    times = tf.random.uniform((BATCH, 1), 0.5, 1.0)
    stops = times * tf.random.uniform((BATCH, 1), 0.0, 0.9)
    u_times = stops + (times - stops) * tf.random.uniform((BATCH, 1), 0.0, 1.0)
    noise_traj = trajectory + times * noise
    u_noise_traj = trajectory + u_times * noise
    with tf.GradientTape() as tape:
        pred = forward(model, noise_traj, times, stops)
        with tape.stop_recording():
            target = forward(model_ema, u_noise_traj, u_times, stops)
        with tape.stop_recording():
            start = tf.fill(tf.shape(times), TIME_MIN)
            pred = forward(model_ema, pred, stops, start)
            target = forward(model_ema, target, stops, start)
        loss = huber(target, pred)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    for w, w_ema in zip(model.weights, model_ema.weights):
        w_ema.assign(0.99 * w_ema + 0.01 * w)
    return loss


trajectories = np.random.normal(size=(BATCH, DIM)).astype("float32")
for step in range(3):
    print("ctm loss", float(train_step(trajectories)))
