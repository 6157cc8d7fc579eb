"""The wrappers that send every writer's path through ``Sandbox`` (see ``sandbox``).

Python's own writers are wrapped when the sandbox goes in; TensorFlow's, Keras's and
h5py's when they are imported (``wrap_libraries`` is called again then). Each wrapper only
rewrites its path arguments and calls the real function.
"""

from __future__ import annotations

import builtins
import functools
import io
import os
import shutil
import sys
from typing import Any

#: a ``sandbox.Sandbox`` (not imported: the sandbox imports this module)
Sandbox = Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def wrap_python(box: Sandbox) -> None:
    opener = _open(box, builtins.open)
    box.set(builtins, "open", opener)
    box.set(io, "open", opener)
    box.set(os, "open", _os_open(box, os.open))
    for name in ("remove", "unlink"):
        box.set(os, name, _delete(box, getattr(os, name), "file"))
    box.set(os, "rmdir", _delete(box, os.rmdir, "dir"))
    box.set(os, "mkdir", _mkdir(box, os.mkdir))
    for name in ("rename", "replace"):
        box.set(os, name, _rename(box, getattr(os, name)))
    for name in ("truncate", "chmod", "utime"):
        box.set(os, name, _change(box, getattr(os, name)))
    for name in ("stat", "lstat", "chdir", "access"):
        box.set(os, name, _read(box, getattr(os, name)))
    box.set(os, "listdir", _listdir(box, os.listdir))
    box.set(os, "scandir", _scandir(box, os.scandir))
    box.set(shutil, "rmtree", _rmtree(box, shutil.rmtree))


def wrap_libraries(box: Sandbox) -> None:
    for name, wrap in _LIBRARIES:
        if name in sys.modules and name not in box._wrapped:
            box._wrapped.add(name)
            wrap(box, sys.modules[name])


# -- Python -------------------------------------------------------------------------------


def _open(box: Sandbox, real):
    @functools.wraps(real)
    def open(file, mode="r", *args, **kwargs):
        if not box.off() and not isinstance(file, int):
            if any(c in mode for c in "wax+"):
                file = box.write_path(file, keep="w" not in mode)
            else:
                file = box.read_path(file)
        return real(file, mode, *args, **kwargs)

    return open


def _os_open(box: Sandbox, real):
    @functools.wraps(real)
    def open(path, flags, *args, **kwargs):
        if not box.off() and kwargs.get("dir_fd") is None:
            if flags & _WRITE_FLAGS:
                path = box.write_path(path, keep=not flags & os.O_TRUNC)
            else:
                path = box.read_path(path)
        return real(path, flags, *args, **kwargs)

    return open


def _delete(box: Sandbox, real, kind: str):
    @functools.wraps(real)
    def delete(path, *args, **kwargs):
        if box.off() or kwargs.get("dir_fd") is not None:
            return real(path, *args, **kwargs)
        return box.delete(path, real, *args, kind=kind, **kwargs)

    return delete


def _mkdir(box: Sandbox, real):
    @functools.wraps(real)
    def mkdir(path, *args, **kwargs):
        if box.off() or kwargs.get("dir_fd") is not None:
            return real(path, *args, **kwargs)
        return box.make_dir(path, real, *args, **kwargs)

    return mkdir


def _rename(box: Sandbox, real):
    @functools.wraps(real)
    def rename(src, dst, *args, **kwargs):
        if box.off() or kwargs.get("src_dir_fd") is not None or kwargs.get("dst_dir_fd") is not None:
            return real(src, dst, *args, **kwargs)
        return box.rename(src, dst, real, *args, **kwargs)

    return rename


def _change(box: Sandbox, real):
    """``truncate``/``chmod``/``utime``: done on a shadow copy."""

    @functools.wraps(real)
    def change(path, *args, **kwargs):
        if not box.off() and kwargs.get("dir_fd") is None:
            path = box.write_path(path, keep=True)
        return real(path, *args, **kwargs)

    return change


def _read(box: Sandbox, real):
    @functools.wraps(real)
    def read(path=".", *args, **kwargs):
        if not box.off() and kwargs.get("dir_fd") is None:
            path = box.read_path(path)
        return real(path, *args, **kwargs)

    return read


def _listdir(box: Sandbox, real):
    @functools.wraps(real)
    def listdir(path="."):
        if box.off():
            return real(path)
        return box.listdir(path)

    return listdir


def _scandir(box: Sandbox, real):
    @functools.wraps(real)
    def scandir(path="."):
        if box.off() or isinstance(path, int):
            return real(path)
        return box.scandir(path, real)

    return scandir


def _rmtree(box: Sandbox, real):
    @functools.wraps(real)
    def rmtree(path, ignore_errors=False, *args, **kwargs):
        if box.off():
            return real(path, ignore_errors, *args, **kwargs)
        try:
            return box.delete(path, real, ignore_errors, *args, kind="tree", **kwargs)
        except OSError:
            if ignore_errors:
                return None
            raise

    return rmtree


# -- h5py, TensorFlow ----------------------------------------------------------------------


def _wrap_h5py(box: Sandbox, h5py) -> None:
    if not isinstance(getattr(h5py, "File", None), type):
        return  # the program's own ``h5py`` (a stub beside it, as python imports it): nothing to wrap
    real = h5py.File.__init__

    @functools.wraps(real)
    def __init__(self, name, mode=None, *args, **kwargs):
        if not box.off() and isinstance(name, (str, bytes, os.PathLike)):
            if mode in (None, "r"):
                name = box.read_path(name)
            else:
                name = box.write_path(name, keep=mode in ("r+", "a", "w-", "x"))
        if mode is None:
            return real(self, name, *args, **kwargs)
        return real(self, name, mode, *args, **kwargs)

    box.set(h5py.File, "__init__", __init__)


def _wrap_file_io(box: Sandbox, fio) -> None:
    """``tf.io.gfile`` and every TensorFlow Python module that reads or writes through it
    (checkpoint state files, SavedModel protos, tf_keras's callbacks)."""

    def wrap(name, build):
        real = getattr(fio, name, None)
        if real is not None:
            box.set(fio, name, build(real))

    def reading(real):
        def call(path, *args):
            return real(path if box.off() else box.read_path(path), *args)

        return call

    def writable(real):
        def call(path, mode, *args):
            if not box.off():
                path = box.write_path(path, keep=b"a" in _bytes(mode))
            return real(path, mode, *args)

        return call

    def copy(real):
        def call(src, dst, *args):
            if not box.off():
                src, dst = box.read_path(src), box.write_path(dst, keep=False)
            return real(src, dst, *args)

        return call

    def deleting(kind):
        def build(real):
            def call(path, *args):
                if box.off():
                    return real(path, *args)
                return box.delete(path, real, *args, kind=kind)

            return call

        return build

    def create(real):
        def call(path, *args):
            if box.off():
                return real(path, *args)
            return box.make_dir(path, real, *args)

        return call

    def create_tree(real):
        def call(path, *args):
            if box.off():
                return real(path, *args)
            return box.make_tree(path, real, *args)

        return call

    def rename(real):
        def call(src, dst, *args):
            if box.off():
                return real(src, dst, *args)
            return box.rename(src, dst, real, *args)

        return call

    def children(real):
        def call(path, *args):
            if box.off():
                return real(path, *args)
            return box.listdir(path, real)

        return call

    def matching(real):
        def call(pattern, *args):
            if box.off() or not (box._covered or box._prefixes):
                return real(pattern, *args)
            return box.glob(pattern, real, *args)

        return call

    for name in ("BufferedInputStream", "FileExists", "IsDirectory", "Stat"):
        wrap(name, reading)
    wrap("WritableFile", writable)
    wrap("CopyFile", copy)
    wrap("DeleteFile", deleting("file"))
    wrap("DeleteRecursively", deleting("tree"))
    wrap("CreateDir", create)
    wrap("RecursivelyCreateDir", create_tree)
    wrap("RenameFile", rename)
    wrap("GetChildren", children)
    wrap("GetMatchingFiles", matching)


def _wrap_checkpoint(box: Sandbox, module) -> None:
    """``TrackableSaver`` saves and restores every TF2 checkpoint: ``tf.train.Checkpoint``,
    its manager, tf_keras's TF-format weights and BackupAndRestore."""
    saver = module.TrackableSaver
    real_save, real_restore = saver.save, saver.restore

    def save(self, file_prefix, *args, **kwargs):
        if not box.off():
            file_prefix = box.write_prefix(file_prefix)
        return real_save(self, file_prefix, *args, **kwargs)

    def restore(self, save_path, *args, **kwargs):
        if not box.off() and save_path is not None:
            save_path = box.read_path(save_path)
        return real_restore(self, save_path, *args, **kwargs)

    box.set(saver, "save", functools.wraps(real_save)(save))
    box.set(saver, "restore", functools.wraps(real_restore)(restore))


def _wrap_checkpoint_manager(box: Sandbox, module) -> None:
    manager = module.CheckpointManager
    real = manager.__init__

    @functools.wraps(real)
    def __init__(self, checkpoint, directory, *args, **kwargs):
        if not box.off():
            directory = box.write_path(directory, keep=True)
        return real(self, checkpoint, directory, *args, **kwargs)

    box.set(manager, "__init__", __init__)


def _wrap_saved_model_save(box: Sandbox, module) -> None:
    real = module.save_and_return_nodes

    @functools.wraps(real)
    def save_and_return_nodes(obj, export_dir, *args, **kwargs):
        if not box.off():
            export_dir = box.write_path(export_dir, keep=True)
        return real(obj, export_dir, *args, **kwargs)

    box.set(module, "save_and_return_nodes", save_and_return_nodes)


def _wrap_saved_model_load(box: Sandbox, module) -> None:
    for name in ("load_partial", "load_internal"):
        real = getattr(module, name, None)
        if real is None:
            continue

        def build(real):
            @functools.wraps(real)
            def load(export_dir, *args, **kwargs):
                return real(export_dir if box.off() else box.read_path(export_dir), *args, **kwargs)

            return load

        replace_everywhere(box, module, name, build(real))


def _wrap_checkpoint_reader(box: Sandbox, module) -> None:
    """``tf.train.load_checkpoint``, ``list_variables``, tf_keras's ``load_weights``."""
    real = module.NewCheckpointReader

    @functools.wraps(real)
    def NewCheckpointReader(filepattern, *args, **kwargs):
        return real(filepattern if box.off() else box.read_path(filepattern), *args, **kwargs)

    replace_everywhere(box, module, "NewCheckpointReader", NewCheckpointReader)


def _wrap_dataset(box: Sandbox, module) -> None:
    """``tf.data``'s files, written by C++: a ``cache`` file (a prefix: ``.index``, shards,
    lock files beside it), ``save``/``snapshot`` directories and ``load``."""
    dataset = module.DatasetV2
    real_cache, real_save, real_snapshot = dataset.cache, dataset.save, dataset.snapshot
    real_load = dataset.__dict__["load"].__func__

    @functools.wraps(real_cache)
    def cache(self, filename="", *args, **kwargs):
        if not box.off() and filename:
            filename = box.write_prefix(filename)
        return real_cache(self, filename, *args, **kwargs)

    def writing_dir(real):
        @functools.wraps(real)
        def call(self, path, *args, **kwargs):
            if not box.off():
                path = box.write_path(path, keep=True)
            return real(self, path, *args, **kwargs)

        return call

    @functools.wraps(real_load)
    def load(path, *args, **kwargs):
        return real_load(path if box.off() else box.read_path(path), *args, **kwargs)

    box.set(dataset, "cache", cache)
    box.set(dataset, "save", writing_dir(real_save))
    box.set(dataset, "snapshot", writing_dir(real_snapshot))
    box.set(dataset, "load", staticmethod(load))


def _wrap_summary(box: Sandbox, module) -> None:
    real = module.create_summary_file_writer

    @functools.wraps(real)
    def create_summary_file_writer(writer, logdir, *args, **kwargs):
        if not box.off():
            logdir = box.write_path(logdir, keep=False)
        return real(writer, logdir, *args, **kwargs)

    box.set(module, "create_summary_file_writer", create_summary_file_writer)


def _wrap_tf_record(box: Sandbox, module) -> None:
    writer = module.TFRecordWriter
    real = writer.__init__

    @functools.wraps(real)
    def __init__(self, path, *args, **kwargs):
        if not box.off():
            path = box.write_path(path, keep=False)
        return real(self, path, *args, **kwargs)

    box.set(writer, "__init__", __init__)


def _wrap_io_ops(box: Sandbox, module) -> None:
    real = module.write_file

    @functools.wraps(real)
    def write_file(filename, contents, *args, **kwargs):
        if not box.off():
            filename = box.write_path(filename, keep=False)
        return real(filename, contents, *args, **kwargs)

    replace_everywhere(box, module, "write_file", write_file)


def replace_everywhere(box: Sandbox, module, name: str, new) -> None:
    """``module.name`` and TensorFlow's public aliases of it (``tf.io.write_file`` is the
    generated op's function object itself)."""
    real = getattr(module, name)
    box.set(module, name, new)
    for other_name, other in list(sys.modules.items()):
        if other is module or not other_name.startswith("tensorflow") or other is None:
            continue
        namespace = getattr(other, "__dict__", {})
        for alias, value in list(namespace.items()):
            if value is real:
                box.set(other, alias, new)


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


_LIBRARIES = (
    ("h5py", _wrap_h5py),
    ("tensorflow.python.lib.io._pywrap_file_io", _wrap_file_io),
    ("tensorflow.python.checkpoint.checkpoint", _wrap_checkpoint),
    ("tensorflow.python.checkpoint.checkpoint_management", _wrap_checkpoint_manager),
    ("tensorflow.python.saved_model.save", _wrap_saved_model_save),
    ("tensorflow.python.saved_model.load", _wrap_saved_model_load),
    ("tensorflow.python.training.py_checkpoint_reader", _wrap_checkpoint_reader),
    ("tensorflow.python.ops.gen_summary_ops", _wrap_summary),
    ("tensorflow.python.data.ops.dataset_ops", _wrap_dataset),
    ("tensorflow.python.lib.io.tf_record", _wrap_tf_record),
    ("tensorflow.python.ops.gen_io_ops", _wrap_io_ops),
)
