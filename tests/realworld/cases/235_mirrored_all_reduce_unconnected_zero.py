"""Real-world case 235.

Source: https://github.com/google-deepmind/sonnet/issues/215
Bug: in a distributed custom loop the per-replica gradients are all-reduced
across replicas, which failed with "None values not supported" because not
all of the model's variables are connected to the loss of a step; the user
silenced it with tape.gradient(..., unconnected_gradients=ZERO), so the head
that this step's loss never uses quietly receives all-zero gradients.
Setting: tf.Module model, tf.distribute.MirroredStrategy on two logical CPUs,
strategy.run inside @tf.function, replica-context all_reduce.
"""
import tensorflow as tf

tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0], [tf.config.LogicalDeviceConfiguration()] * 2)

tf.random.set_seed(0)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


class MultiTaskNet(tf.Module):
    def __init__(self):
        super().__init__(name="multi_task_net")
        init = tf.random_normal_initializer(stddev=0.1)
        first = tf.VariableAggregation.ONLY_FIRST_REPLICA
        self.trunk = tf.Variable(init([8, 16]), name="trunk", aggregation=first)
        self.head_a = tf.Variable(init([16, 1]), name="head_a", aggregation=first)
        self.head_b = tf.Variable(init([16, 1]), name="head_b", aggregation=first)

    def __call__(self, x, task):
        h = tf.nn.relu(tf.matmul(x, self.trunk))
        return tf.matmul(h, self.head_a if task == "a" else self.head_b)


with strategy.scope():
    model = MultiTaskNet()


def step_fn(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, "a") - y))
    grads = tape.gradient(loss, model.trainable_variables,
                          unconnected_gradients=tf.UnconnectedGradients.ZERO)
    grads = tf.distribute.get_replica_context().all_reduce("mean", grads)
    for g, v in zip(grads, model.trainable_variables):
        v.assign_sub(0.1 * g)
    return loss


@tf.function
def train_step(x, y):
    per_replica = strategy.run(step_fn, args=(x, y))
    return strategy.reduce("mean", per_replica, axis=None)


x = tf.random.normal([8, 8])
y = tf.random.normal([8, 1])
dist = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(8)))
print("loss:", float(train_step(*next(dist))))
