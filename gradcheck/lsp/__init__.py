"""``gradcheck lsp``: the static engine in the editor, over the Language Server Protocol.

``document`` holds what is said about one buffer (no LSP); ``server`` speaks the protocol
(pygls, installed with the ``lsp`` extra). Neither imports TensorFlow.
"""

from __future__ import annotations


def main(argv: list[str]) -> int:
    """Run the server over stdio; 2 with a one-line message when pygls is not installed."""
    try:
        from gradcheck.lsp.server import main as serve
    except ImportError as error:
        import sys

        print(
            f"gradcheck lsp: needs pygls ({error.name or error} is not installed): pip install -e '.[lsp]' in gradcheck's clone",
            file=sys.stderr,
        )
        return 2
    return serve(argv)
