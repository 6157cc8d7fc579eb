"""Helpers the patch kinds share: parse generated code, and refer to a value twice."""

from __future__ import annotations

import libcst as cst

from gradcheck.fix.patch import Candidate
from gradcheck.fix.source import Source, Unpatchable, is_simple


def expression(code: str) -> cst.BaseExpression:
    try:
        return cst.parse_expression(code)
    except cst.ParserSyntaxError as error:  # a bug in a patch kind, not in the user's code
        raise Unpatchable(f"generated code does not parse: {code!r} ({error.message})") from None


def statement(code: str, like: cst.CSTNode | None = None) -> cst.BaseStatement:
    try:
        return cst.parse_statement(code)
    except cst.ParserSyntaxError as error:
        raise Unpatchable(f"generated code does not parse: {code!r} ({error.message})") from None


def value_name(source: Source, candidate: Candidate, node: cst.BaseExpression, base: str) -> str:
    """Code that refers to the value of ``node`` and may be written more than once: the
    expression itself when it is a plain name (or attribute, subscript), else a new
    variable assigned just before the statement (so the value is computed once, as the
    user's code computed it)."""
    if is_simple(node):
        return source.code(node).strip()
    if source.inside_lambda(node) is not None or source.in_comprehension(node):
        raise Unpatchable("the value would need a name, inside a lambda or comprehension")
    stmt = source.statement(node)
    parent = source.parent(stmt)
    if not isinstance(parent, (cst.Module, cst.IndentedBlock)):
        raise Unpatchable("the statement is not in a block")
    if isinstance(stmt, cst.BaseCompoundStatement):
        raise Unpatchable("the value is in the header of a compound statement")
    name = source.fresh(base)
    candidate.insert_before(stmt, statement(f"{name} = {_code_inline(source, node)}"))
    return name


def _code_inline(source: Source, node: cst.BaseExpression) -> str:
    """The expression as one line of code (its own parentheses kept)."""
    text = source.code(node).strip()
    if "\n" in text and not (text.startswith("(") and text.endswith(")")):
        text = f"({text})"
    return text


#: Where an expression may stand without parentheses of its own.
_LOOSE_PARENTS = (
    cst.Arg,
    cst.Assign,
    cst.AnnAssign,
    cst.AugAssign,
    cst.Return,
    cst.Element,
    cst.Expr,
    cst.Index,
    cst.DictElement,
    cst.Lambda,
    cst.Param,
    cst.Yield,
)


def replace_expression(source: Source, candidate: Candidate, node: cst.BaseExpression, code: str) -> None:
    """Replace ``node`` by the expression ``code``, in parentheses where an operator
    around it would otherwise bind differently."""
    parent = source.parent(node)
    if not node.lpar and not isinstance(parent, _LOOSE_PARENTS) and parenthesize(code) != code:
        code = f"({code})"
    candidate.replace(node, expression(code))


def parenthesize(code: str) -> str:
    """``code`` as an operand of ``*``/``+``: parenthesized unless it is atomic."""
    try:
        node = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return f"({code})"
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)) or node.lpar:
        return code
    return f"({code})"


def append_arg(args: list[cst.Arg], new: cst.Arg) -> list[cst.Arg]:
    """``args`` and ``new`` after them; a trailing comma (a call laid out one argument per
    line) moves to the new last argument."""
    if not args:
        return [new]
    last = args[-1]
    if isinstance(last.comma, cst.Comma):
        new = new.with_changes(comma=cst.Comma(whitespace_after=last.comma.whitespace_after))
        args[-1] = last.with_changes(
            comma=cst.Comma(whitespace_before=last.comma.whitespace_before, whitespace_after=cst.SimpleWhitespace(" "))
        )
        if isinstance(last.comma.whitespace_after, cst.ParenthesizedWhitespace):
            args[-1] = last.with_changes(comma=last.comma)
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return [*args, new]
