"""Real-world case 761.

Source: https://github.com/keras-team/keras/issues/5733
Bug: the actor's custom loss is declared as policyLoss(y_pred, y_true), but
Keras calls a loss as loss(y_true, y_pred).  Inside the loss the name y_pred
therefore holds the baseline target (zero everywhere except the taken action),
and K.log of those zeros is -inf: the actor loss is +inf on every batch.
Setting: tf.keras 2 (tf_keras), actor-critic class, compile(loss=...) + train_on_batch.
"""
import numpy as np
import tensorflow as tf

K = tf.keras.backend
layers = tf.keras.layers


class NaiveActorCritic:
    def __init__(self, state_dim=4, n_actions=2, gamma=0.99):
        self.state_dim = state_dim
        self.n_actions = n_actions
        self.gamma = gamma
        self.actor = self.build_actor()
        self.critic = self.build_critic()

    def policyLoss(self, y_pred, y_true):
        loss = K.dot(K.log(y_pred), K.transpose(y_true))
        return -loss

    def build_actor(self):
        actor = tf.keras.Sequential([
            layers.Dense(24, activation="relu", input_shape=(self.state_dim,)),
            layers.Dense(24, activation="relu"),
            layers.Dense(self.n_actions, activation="softmax"),
        ])
        actor.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss=self.policyLoss)
        return actor

    def build_critic(self):
        critic = tf.keras.Sequential([
            layers.Dense(24, activation="relu", input_shape=(self.state_dim,)),
            layers.Dense(1),
        ])
        critic.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss="mse")
        return critic

    def train(self, state, action, reward, next_state, done):
        batch_shape = (1, self.state_dim)
        value = self.critic.predict(state.reshape(batch_shape), verbose=0)[0, 0]
        next_value = 0.0 if done else self.critic.predict(next_state.reshape(batch_shape), verbose=0)[0, 0]
        target = reward + self.gamma * next_value
        baseline = np.zeros((1, self.n_actions), dtype="float32")
        baseline[0, action] = target - value
        actor_loss = self.actor.train_on_batch(state.reshape(batch_shape), baseline)
        critic_loss = self.critic.train_on_batch(state.reshape(batch_shape), np.array([[target]], dtype="float32"))
        return actor_loss, critic_loss


rng = np.random.default_rng(0)
agent = NaiveActorCritic()
state = rng.normal(size=4).astype("float32")
for step in range(5):
    probs = agent.actor.predict(state.reshape(1, 4), verbose=0)[0]
    action = int(rng.choice(2, p=probs / probs.sum()))
    next_state = rng.normal(size=4).astype("float32")
    actor_loss, critic_loss = agent.train(state, action, 1.0, next_state, done=False)
    print("step", step, "actor loss", actor_loss, "critic loss", critic_loss)
    if not np.isfinite(actor_loss):
        print("actor loss is not finite, stopping")
        break
    state = next_state
