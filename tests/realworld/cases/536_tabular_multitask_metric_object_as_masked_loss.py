"""Real-world case 536.

Source: https://github.com/keras-team/keras/issues/19150
Bug: a multi-task model whose two label columns are only partly known (-1
marks a missing label). To skip the missing labels the user wraps a
keras.metrics.SparseCategoricalCrossentropy(ignore_class=-1) *metric* object
in the loss function of both heads. Calling a Keras 3 metric runs
update_state(), which assign_add()s the batch value into the metric's
`total`/`count` variables, and returns result(), which reads them back:
the loss is a variable read, not a function of the predictions, so fit()
raises "No gradients provided for any variable". The functional
sparse_categorical_crossentropy(..., ignore_class=-1) works.
Setting: Keras 3 functional tabular model (Normalization + IntegerLookup +
Embedding preprocessing layers), two softmax heads, custom loss, fit().
"""
import numpy as np
import keras
from keras import layers

N_ROWS = 256
N_NUMERIC = 6
REGIONS = [3, 7, 11, 19, 23]

rng = np.random.default_rng(0)
numeric = rng.normal(loc=50.0, scale=12.0, size=(N_ROWS, N_NUMERIC)).astype("float32")
region = rng.choice(REGIONS, size=(N_ROWS, 1)).astype("int64")
churn = rng.integers(-1, 2, size=(N_ROWS,))  # -1: label not collected
plan = rng.integers(-1, 3, size=(N_ROWS,))


def masked_sparse_ce(name):
    """Cross-entropy that ignores rows whose label is -1."""
    sparse_cc = keras.metrics.SparseCategoricalCrossentropy(name=name)

    def loss(y_true, y_pred):
        return sparse_cc(keras.ops.maximum(y_true, 0), y_pred, sample_weight=keras.ops.not_equal(y_true, -1))

    return loss


def build_model():
    norm = layers.Normalization(name="numeric_norm")
    norm.adapt(numeric)
    lookup = layers.IntegerLookup(vocabulary=REGIONS, name="region_lookup")

    num_in = keras.Input(shape=(N_NUMERIC,), name="numeric")
    reg_in = keras.Input(shape=(1,), dtype="int64", name="region")
    reg_vec = layers.Flatten()(layers.Embedding(len(REGIONS) + 1, 4, name="region_emb")(lookup(reg_in)))
    h = layers.Concatenate()([norm(num_in), reg_vec])
    h = layers.Dense(32, activation="relu", name="shared_1")(h)
    h = layers.Dense(16, activation="relu", name="shared_2")(h)
    churn_out = layers.Dense(2, activation="softmax", name="churn")(h)
    plan_out = layers.Dense(3, activation="softmax", name="plan")(h)
    return keras.Model({"numeric": num_in, "region": reg_in}, {"churn": churn_out, "plan": plan_out})


keras.utils.set_random_seed(0)
model = build_model()
model.compile(
    optimizer=keras.optimizers.Adam(1e-3),
    loss={"churn": masked_sparse_ce("churn_ce"), "plan": masked_sparse_ce("plan_ce")},
)
model.fit(
    {"numeric": numeric, "region": region},
    {"churn": churn, "plan": plan},
    batch_size=64,
    epochs=1,
    verbose=0,
)
