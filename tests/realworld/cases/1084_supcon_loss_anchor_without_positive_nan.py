"""Real-world case 1084.

Source: https://github.com/HobbitLong/SupContrast/issues/50
Bug: a supervised-contrastive (SupCon) loss fed one view per sample. The mean
log-likelihood over positives is `sum(mask * log_prob, 1) / sum(mask, 1)`;
with a single view and many classes some anchors have no other sample of
their label in the batch, so `mask.sum(1)` is 0 and the division gives
0/0 = NaN: the loss is NaN from the first batch and every weight's gradient
is NaN ("mask.sum(1) has the number 0, so the loss is nan").
Setting: Keras 3, model.fit with an overridden compute_loss (keras.ops), self-supervised/contrastive encoder.
"""
import numpy as np
import keras
from keras import layers, ops

keras.utils.set_random_seed(0)
NUM_CLASSES, FEAT = 20, 16


class SupConEncoder(keras.Model):
    def __init__(self, temperature=0.1):
        super().__init__()
        self.backbone = layers.Dense(64, activation="relu", name="backbone")
        self.head = layers.Dense(32, name="projection_head")
        self.temperature = temperature

    def call(self, x):
        return self.head(self.backbone(x))

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        features = ops.normalize(y_pred, axis=-1)
        labels = ops.reshape(y, (-1, 1))
        batch = ops.shape(features)[0]
        mask = ops.cast(ops.equal(labels, ops.transpose(labels)), "float32")
        logits = ops.matmul(features, ops.transpose(features)) / self.temperature
        logits = logits - ops.stop_gradient(ops.max(logits, axis=1, keepdims=True))
        logits_mask = 1.0 - ops.eye(batch)
        mask = mask * logits_mask
        exp_logits = ops.exp(logits) * logits_mask
        log_prob = logits - ops.log(ops.sum(exp_logits, axis=1, keepdims=True))
        mean_log_prob_pos = ops.sum(mask * log_prob, axis=1) / ops.sum(mask, axis=1)
        return -ops.mean(mean_log_prob_pos)


x = np.random.normal(size=(128, FEAT)).astype("float32")
y = np.random.randint(0, NUM_CLASSES, size=(128,)).astype("int32")
model = SupConEncoder()
model.compile(optimizer=keras.optimizers.SGD(0.05))
history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
print("loss per epoch:", history.history["loss"])
print("backbone kernel finite:", bool(np.isfinite(ops.convert_to_numpy(model.backbone.kernel)).all()))
