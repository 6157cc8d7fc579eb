"""Real-world control 1114 (twin of case 1094).

Source: https://github.com/ProteomicsML/ProteomicsML/pull/203
Fixed: as in the PR, the final regression layer is linear
(no ReLU), so the standardised (partly negative) CCS targets can be reached
and the output never sits on a flat zero region.
Setting: Keras 3 functional LSTM model, compile() + fit().
"""
import numpy as np
import keras
from keras import layers

AA, MAX_LEN, N = 20, 30, 256
rng = np.random.default_rng(0)
lengths = rng.integers(7, 25, size=N)
peptides = np.zeros((N, MAX_LEN, AA), dtype="float32")     # one-hot, post-padded
for i, n in enumerate(lengths):
    peptides[i, np.arange(n), rng.integers(0, AA, size=n)] = 1.0
ccs = 250.0 + 18.0 * lengths + rng.normal(0, 10, size=N)
ccs_scaled = ((ccs - ccs.mean()) / ccs.std()).astype("float32")[:, None]

keras.utils.set_random_seed(0)
inp = keras.Input(shape=(MAX_LEN, AA))
h = layers.LSTM(32, name="lstm")(inp)
h = layers.Dense(16, activation="relu", name="dense_hidden")(h)
out = layers.Dense(1, name="ccs_out")(h)
model = keras.Model(inp, out)

model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
model.fit(peptides, ccs_scaled, batch_size=32, epochs=3, verbose=2)
print("fraction of peptides predicted as 0:", float((model.predict(peptides, verbose=0) == 0).mean()))
