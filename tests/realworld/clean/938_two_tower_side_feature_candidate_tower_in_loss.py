"""Real-world control 938 (fixed twin of case 538).

Source: https://github.com/tensorflow/recommenders/issues/104
Fix: call() produces the candidate embeddings with the side-feature
candidate tower (style + high-level shape -> Dense), the same tower used to
embed the catalogue, and the leftover id-only style embedding is dropped, so
every tower weight is trained by the in-batch softmax loss.
Setting: Keras 3 subclassed Model with a functional sub-model, custom
train_step with tf.GradientTape, fit() on a tf.data dict dataset.
"""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

N_USERS = 50
N_STYLES = 40
N_SHAPES = 6
EMB = 16

rng = np.random.default_rng(0)
style_shape = rng.integers(0, N_SHAPES, size=(N_STYLES,)).astype("int32")
user_id = rng.integers(0, N_USERS, size=(512,)).astype("int32")
style = rng.integers(0, N_STYLES, size=(512,)).astype("int32")
interactions = {"user_id": user_id, "style": style, "high_level_shape": style_shape[style]}


def build_candidate_tower():
    style_in = keras.Input(shape=(), dtype="int32", name="style")
    shape_in = keras.Input(shape=(), dtype="int32", name="high_level_shape")
    style_vec = layers.Embedding(N_STYLES, EMB, name="cand_style_emb")(style_in)
    shape_vec = layers.Embedding(N_SHAPES, 4, name="cand_shape_emb")(shape_in)
    merged = layers.Concatenate()([style_vec, shape_vec])
    out = layers.Dense(EMB, use_bias=False, name="cand_project")(merged)
    return keras.Model({"style": style_in, "high_level_shape": shape_in}, out, name="candidate_tower")


class StyleRetrievalModel(keras.Model):
    def __init__(self):
        super().__init__(name="style_retrieval")
        self.user_tower = keras.Sequential(
            [layers.Embedding(N_USERS, EMB, name="user_emb"), layers.Dense(EMB, name="user_project")],
            name="user_tower",
        )
        self.candidate_tower = build_candidate_tower()

    def call(self, features, training=False):
        query = self.user_tower(features["user_id"], training=training)
        candidate = self.candidate_tower(
            {"style": features["style"], "high_level_shape": features["high_level_shape"]}, training=training
        )
        return query, candidate

    def retrieval_loss(self, query, candidate):
        # in-batch softmax: the diagonal pairs are the positives
        logits = ops.matmul(query, ops.transpose(candidate))
        labels = ops.arange(ops.shape(logits)[0])
        return ops.mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))

    def train_step(self, features):
        with tf.GradientTape() as tape:
            query, candidate = self(features, training=True)
            loss = self.retrieval_loss(query, candidate)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"retrieval_loss": loss}


keras.utils.set_random_seed(0)
model = StyleRetrievalModel()
model(interactions)  # build the towers
model.compile(optimizer=keras.optimizers.Adagrad(0.1))
train_ds = tf.data.Dataset.from_tensor_slices(interactions).shuffle(512, seed=0).batch(64)
model.fit(train_ds, epochs=1, verbose=0)

# embed the whole catalogue with the side-feature tower for top-k retrieval
catalogue = {"style": np.arange(N_STYLES, dtype="int32"), "high_level_shape": style_shape}
index = model.candidate_tower(catalogue)
print("candidate index:", tuple(index.shape))
