"""Real-world case 883 (control for 483).

Source: https://github.com/qqwweee/keras-yolo3/issues/770
Fix: the loss loops over every head it is given (num_layers = len(yolo_outputs))
instead of deriving the number of scales from the anchor list, so all three heads,
and the layers feeding them, are trained.
Setting: Keras 3 functional multi-input / multi-output detector, Lambda loss layer
fed with the three heads and three y_true inputs, model.fit.
"""
import numpy as np
import keras
from keras import layers, ops

keras.utils.set_random_seed(0)
NUM_CLASSES = 1
ANCHORS = np.array([[10, 14], [23, 27], [37, 58]], dtype="float32")  # 3 anchors
CH = 3 * (5 + NUM_CLASSES)


def conv_bn(x, filters, name):
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False, name="Layer_Conv_" + name)(x)
    x = layers.BatchNormalization(name="Layer_Batch_" + name)(x)
    return layers.LeakyReLU(0.1)(x)


def make_yolo_body():
    image = keras.Input((32, 32, 3), name="Main_Input")
    x = layers.Conv2D(8, 3, padding="same", activation="relu")(image)
    route_8 = layers.Conv2D(16, 3, strides=4, padding="same", activation="relu")(x)       # 8x8
    route_4 = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(route_8)  # 4x4
    route_2 = layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(route_4)  # 2x2
    f0 = conv_bn(route_2, 16, "71")
    out0 = layers.Conv2D(CH, 1, name="Output_0")(f0)
    f1 = conv_bn(layers.Concatenate()([layers.UpSampling2D()(f0), route_4]), 16, "81")
    out1 = layers.Conv2D(CH, 1, name="Output_1")(f1)
    f2 = conv_bn(layers.Concatenate()([layers.UpSampling2D()(f1), route_8]), 16, "91")
    out2 = layers.Conv2D(CH, 1, name="Output_2")(f2)
    return keras.Model(image, [out0, out1, out2])


def yolo_loss(args, anchors, num_classes):
    yolo_outputs = args[:3]
    y_true = args[3:]
    num_layers = len(yolo_outputs)  # one loss term per head
    loss = 0.0
    for l in range(num_layers):
        raw = ops.reshape(yolo_outputs[l], (-1, 3, 5 + num_classes))
        true = ops.reshape(y_true[l], (-1, 3, 5 + num_classes))
        object_mask = true[..., 4:5]
        box_loss = object_mask * ops.square(ops.sigmoid(raw[..., 0:4]) - true[..., 0:4])
        conf_loss = ops.binary_crossentropy(object_mask, raw[..., 4:5], from_logits=True)
        class_loss = object_mask * ops.binary_crossentropy(true[..., 5:], raw[..., 5:], from_logits=True)
        per_cell = ops.sum(box_loss, -1) + ops.sum(conf_loss, -1) + ops.sum(class_loss, -1)
        batch = ops.shape(yolo_outputs[l])[0]
        loss = loss + ops.sum(ops.reshape(per_cell, (batch, -1)), axis=1, keepdims=True)
    return loss


model_body = make_yolo_body()
y_true_inputs = [keras.Input((s, s, CH)) for s in (2, 4, 8)]
model_loss = layers.Lambda(yolo_loss, name="GetLoss",
                           arguments={"anchors": ANCHORS, "num_classes": NUM_CLASSES})(
    [*model_body.outputs, *y_true_inputs])
train_model = keras.Model([model_body.input, *y_true_inputs], model_loss)
train_model.compile(optimizer=keras.optimizers.Adam(1e-3),
                    loss={"GetLoss": lambda y_true, y_pred: y_pred})

n = 16
images = np.random.uniform(0, 1, (n, 32, 32, 3)).astype("float32")
targets = [np.random.uniform(0, 1, (n, s, s, CH)).round().astype("float32") for s in (2, 4, 8)]
history = train_model.fit([images, *targets], np.zeros((n, 1), "float32"),
                          batch_size=8, epochs=1, verbose=0)
print("loss", history.history["loss"])
