"""Clean control 875 (look-alike of case 475).

Source: https://github.com/aseuteurideu/ADNet_pytorch/issues/5
The REINFORCE stage with the log-probabilities kept as tensors recorded by the tape (only the
sampled action index is taken to the host, to step the tracker), stacked at the end of the
episode, so the policy-gradient loss reaches the action network.
Setting: Keras 3 Sequential action network (11 tracking actions), eager episode rollout
inside one GradientTape, discounted returns, update at the end of the episode.
"""
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
N_ACTIONS, FEATURES, GAMMA = 11, 32, 0.9

policy = keras.Sequential([
    keras.Input((FEATURES,)),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(N_ACTIONS, activation="softmax"),
])
optimizer = keras.optimizers.SGD(1e-3)


def tracker_step(features, action):
    next_features = features + 0.1 * np.random.randn(FEATURES).astype("float32")
    reward = 1.0 if action in (0, 5) else -1.0
    return next_features, reward, action == 10


for episode in range(3):
    features = np.random.randn(FEATURES).astype("float32")
    log_probs_list, rewards = [], []
    with tf.GradientTape() as tape:
        for t in range(20):
            fc6_out = policy(features[None])
            action_ = int(tf.random.categorical(tf.math.log(fc6_out), 1)[0, 0])
            log_probs_list.append(tf.math.log(fc6_out[0, action_]))
            features, reward, done = tracker_step(features, action_)
            rewards.append(reward)
            if done:
                break
        returns, running = [], 0.0
        for r in reversed(rewards):
            running = r + GAMMA * running
            returns.insert(0, running)
        loss = -tf.reduce_sum(tf.stack(log_probs_list) * tf.constant(returns, tf.float32))
    grads = tape.gradient(loss, policy.trainable_variables)
    assert all(g is not None and bool(tf.reduce_all(tf.math.is_finite(g))) for g in grads)
    optimizer.apply_gradients(zip(grads, policy.trainable_variables))
