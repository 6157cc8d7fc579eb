"""Real-world case 495.

Source: https://github.com/keras-team/keras-io/issues/194
Bug: the keras.io / TensorFlow actor-critic (CartPole) examples weight the log-probability of
the taken action by the advantage `returns - values`, where `values` is the critic head's
output from the SAME forward pass of the shared actor-critic model, without tf.stop_gradient.
As the report explains, the actor loss then also differentiates through the advantage: it
pulls the critic head and the shared trunk so as to move V(s) (upward: d actor_loss / dV is
log pi < 0) instead of treating the advantage as a fixed weight. Nothing fails; the value
estimates are biased away from the returns the critic loss regresses them to.
Setting: Keras 3 functional two-head model (shared Dense trunk, actor and critic heads),
@tf.function train step with a raw GradientTape, synthetic batch of states, actions, returns.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)  # seeds Python, NumPy and TensorFlow
N_STATE, N_ACTIONS, B, GAMMA = 4, 2, 64, 0.99

inputs = keras.Input((N_STATE,))
common = keras.layers.Dense(32, activation="relu", name="common")(inputs)
action_logits = keras.layers.Dense(N_ACTIONS, name="actor")(common)
critic_value = keras.layers.Dense(1, name="critic")(common)
model = keras.Model(inputs, [action_logits, critic_value])
optimizer = keras.optimizers.Adam(3e-3)
huber = keras.losses.Huber(reduction="sum")

states = np.random.randn(B, N_STATE).astype("float32")
actions = np.random.randint(0, N_ACTIONS, B).astype("int32")
returns = np.array([sum(GAMMA**k for k in range(B - t)) for t in range(B)], "float32")
returns = (returns - returns.mean()) / (returns.std() + 1e-7)


@tf.function
def train_step(states, actions, returns):
    with tf.GradientTape() as tape:
        logits, values = model(states)
        values = tf.squeeze(values, 1)
        log_probs = tf.gather(tf.nn.log_softmax(logits), actions, batch_dims=1)
        advantage = returns - values
        actor_loss = -tf.reduce_sum(log_probs * advantage)
        critic_loss = huber(returns, values)
        loss = actor_loss + critic_loss
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return critic_loss, values


for step in range(100):
    critic_loss, values = train_step(states, actions, returns)
bias = float(tf.reduce_mean(values - returns))
print(f"critic_loss={float(critic_loss):.3f}  mean(V - returns) after 100 steps = {bias:+.3f}")
assert bias > 1.0, bias  # the actor loss has dragged V far above the returns
