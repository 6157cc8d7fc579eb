"""Real-world case 1094.

Source: https://github.com/ProteomicsML/ProteomicsML/pull/203
Bug: an LSTM regressor for peptide collisional cross sections (CCS) ends in
Dense(1, activation="relu"). The targets are standardised (half of them are
negative), and with this initialisation the very first Adam step pushes the
pre-ReLU output below zero for every peptide: the ReLU output is 0 for the
whole data set, its derivative is 0, every weight's gradient is exactly
zero and the model predicts a constant 0 from then on (loss stuck at 1.0).
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
out = layers.Dense(1, activation="relu", name="ccs_out")(h)
model = keras.Model(inp, out)

model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
model.fit(peptides, ccs_scaled, batch_size=32, epochs=3, verbose=2)
print("fraction of peptides predicted as 0:", float((model.predict(peptides, verbose=0) == 0).mean()))
