"""Clean control 980 (expected clean).

Look-alike of case 580: the A2C advantage is wrapped in tf.stop_gradient
before it weights the policy loss (the maintainer's fix), so the critic head
and the shared trunk learn the value only from the value loss.
Setting: RL (advantage actor-critic), tf_keras (Keras 2) model with policy and value heads, @tf.function update.
"""
import numpy as np
import tensorflow as tf
import tf_keras as K


class SampleLayer(K.layers.Layer):

    def call(self, x):
        noise = tf.random.uniform(tf.shape(x))
        return tf.argmax(x - tf.math.log(-tf.math.log(noise)), axis=1)


class ActorCriticAgent:

    def __init__(self, actions):
        self.actions = actions
        self.model = None

    def make_model(self, feature_shape):
        normal = K.initializers.glorot_normal()
        model = K.Sequential()
        model.add(K.layers.Dense(64, input_shape=feature_shape,
                                 kernel_initializer=normal, activation="relu"))
        model.add(K.layers.Dense(64, kernel_initializer=normal, activation="relu"))
        action_evals = K.layers.Dense(len(self.actions), kernel_initializer=normal)(model.output)
        actions = SampleLayer()(action_evals)
        values = K.layers.Dense(1, kernel_initializer=normal)(model.output)
        self.model = K.Model(inputs=model.input, outputs=[actions, action_evals, values])

    def set_updater(self, optimizer, value_loss_weight=1.0, entropy_weight=0.1):
        self.optimizer = optimizer
        self.value_loss_weight = value_loss_weight
        self.entropy_weight = entropy_weight

    def categorical_entropy(self, logits):
        a0 = logits - tf.reduce_max(logits, axis=-1, keepdims=True)
        ea0 = tf.exp(a0)
        z0 = tf.reduce_sum(ea0, axis=-1, keepdims=True)
        p0 = ea0 / z0
        return tf.reduce_sum(p0 * (tf.math.log(z0) - a0), axis=-1)

    @tf.function
    def update(self, states, actions, rewards):
        with tf.GradientTape() as tape:
            _, action_evals, values = self.model(states, training=True)
            values = tf.reshape(values, [-1])
            advantages = tf.stop_gradient(rewards - values)
            neg_logs = tf.nn.sparse_softmax_cross_entropy_with_logits(
                logits=action_evals, labels=actions)
            policy_loss = tf.reduce_mean(neg_logs * tf.nn.softplus(advantages))
            value_loss = tf.reduce_mean(tf.square(rewards - values))
            action_entropy = tf.reduce_mean(self.categorical_entropy(action_evals))
            loss = policy_loss + self.value_loss_weight * value_loss
            loss -= self.entropy_weight * action_entropy
        grads = tape.gradient(loss, self.model.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_weights))
        return loss, policy_loss, value_loss


rng = np.random.default_rng(0)
agent = ActorCriticAgent(actions=[0, 1])
agent.make_model((4,))
agent.set_updater(K.optimizers.Adam(learning_rate=1e-3, clipnorm=5.0))
states = rng.normal(size=(32, 4)).astype("float32")
actions = rng.integers(0, 2, size=32).astype("int32")
rewards = rng.uniform(0.0, 10.0, size=32).astype("float32")
for step in range(40):
    loss, policy_loss, value_loss = agent.update(states, actions, rewards)
    if step % 10 == 0 or step == 39:
        print("step", step, "loss", float(loss), "policy", float(policy_loss), "value", float(value_loss))
