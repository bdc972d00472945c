"""GitHub Actions expressions (`${{ ... }}`, a job's `if:`), parsed and evaluated.

Enough of the language for tests/ci/workflow_policy.py to ask what a workflow does under a given
event: literals, context paths (`github.event.pull_request.number`, `a['b']`), `!`, comparisons,
`&&`, `||` (which return an operand, as in GitHub: `cond && 'x' || 'y'`), and function calls.
A context path the caller does not supply evaluates to UNKNOWN, and so does any function call, so
a question like "can this job run on a pull_request event?" is answered "no" only when the
expression is false whatever the unknown values are (three-valued logic).
Reference: https://docs.github.com/en/actions/reference/workflows-and-actions/expressions
"""
import re


class _Unknown:
    def __repr__(self):
        return "UNKNOWN"


UNKNOWN = _Unknown()

_TOKEN = re.compile(r"""
    \s*(?:
      (?P<str>'(?:[^']|'')*')
    | (?P<num>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?))
    | (?P<op>==|!=|<=|>=|&&|\|\||[!<>()\[\],.*])
    | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
    )""", re.X)


def _tokens(text):
    pos, out = 0, []
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot parse expression at {text[pos:pos + 20]!r}: {text!r}")
        pos = m.end()
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
    return out


class _Parser:
    """Precedence, lowest first: ||, &&, == !=, < <= > >=, !, then primaries."""

    def __init__(self, text):
        self.toks = _tokens(text)
        self.i = 0
        self.text = text

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None or (value is not None and tok[1] != value):
            raise ValueError(f"expected {value or 'a token'} in {self.text!r}")
        self.i += 1
        return tok

    def parse(self):
        node = self.or_()
        if self.i != len(self.toks):
            raise ValueError(f"unexpected {self.peek()[1]!r} in {self.text!r}")
        return node

    def or_(self):
        node = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            node = ("or", node, self.and_())
        return node

    def and_(self):
        node = self.eq()
        while self.peek() == ("op", "&&"):
            self.take()
            node = ("and", node, self.eq())
        return node

    def eq(self):
        node = self.cmp()
        while self.peek()[1] in ("==", "!=") and self.peek()[0] == "op":
            op = self.take()[1]
            node = (op, node, self.cmp())
        return node

    def cmp(self):
        node = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("<", "<=", ">", ">="):
            op = self.take()[1]
            node = (op, node, self.unary())
        return node

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return ("not", self.unary())
        return self.postfix()

    def postfix(self):
        kind, value = self.take()
        if kind == "str":
            node = ("lit", value[1:-1].replace("''", "'"))
        elif kind == "num":
            node = ("lit", float(int(value, 16)) if value.lower().startswith(("0x", "-0x")) else float(value))
        elif (kind, value) == ("op", "("):
            node = self.or_()
            self.take(")")
        elif kind == "name" and value in ("true", "false", "null"):
            node = ("lit", {"true": True, "false": False, "null": None}[value])
        elif kind == "name" and self.peek() == ("op", "("):
            self.take("(")
            args = []
            while self.peek() != ("op", ")"):
                args.append(self.or_())
                if self.peek() == ("op", ","):
                    self.take()
            self.take(")")
            node = ("call", value.lower(), args)
        elif kind == "name":
            node = ("path", [value])
        else:
            raise ValueError(f"unexpected {value!r} in {self.text!r}")
        while node[0] == "path" and self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == ".":
                node = ("path", node[1] + [self.take()[1]])
            else:
                key = self.take()
                self.take("]")
                node = ("path", node[1] + [key[1][1:-1] if key[0] == "str" else key[1]])
        return node


def parse(text):
    return _Parser(text).parse()


def truthy(value):
    """True, False, or None when the value is unknown."""
    if value is UNKNOWN:
        return None
    if isinstance(value, float):
        return value != 0 and value == value
    return bool(value)


def _loose_equal(a, b):
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()  # GitHub compares strings ignoring case
    return a == b


def evaluate(node, context):
    """The value of a parsed expression; context maps dotted paths to values."""
    op = node[0]
    if op == "lit":
        return node[1]
    if op == "path":
        return context.get(".".join(node[1]), UNKNOWN)
    if op == "call":
        return UNKNOWN
    if op == "not":
        t = truthy(evaluate(node[1], context))
        return UNKNOWN if t is None else not t
    left = evaluate(node[1], context)
    if op == "and":
        t = truthy(left)
        if t is False:
            return left
        right = evaluate(node[2], context)
        if t is True:
            return right
        return False if truthy(right) is False else UNKNOWN
    if op == "or":
        t = truthy(left)
        if t is True:
            return left
        right = evaluate(node[2], context)
        if t is False:
            return right
        return True if truthy(right) is True else UNKNOWN
    right = evaluate(node[2], context)
    if left is UNKNOWN or right is UNKNOWN:
        return UNKNOWN
    if op == "==":
        return _loose_equal(left, right)
    if op == "!=":
        return not _loose_equal(left, right)
    if isinstance(left, float) and isinstance(right, float):
        return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
    return UNKNOWN


def paths(node):
    """Every context path the expression reads, dotted."""
    if node[0] == "path":
        return {".".join(node[1])}
    if node[0] == "lit":
        return set()
    if node[0] == "call":
        return set().union(*(paths(a) for a in node[2])) if node[2] else set()
    return set().union(*(paths(n) for n in node[1:]))


_TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def condition(text):
    """A job's or step's `if:` (with or without ${{ }}), parsed."""
    if isinstance(text, bool):
        return ("lit", text)
    text = str(text).strip()
    m = _TEMPLATE.fullmatch(text)
    return parse(m.group(1) if m else text)


def template(value, context):
    """A value that may hold ${{ }} expressions: its result (UNKNOWN if any part is)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    m = _TEMPLATE.fullmatch(text)
    if m:
        return evaluate(parse(m.group(1)), context)
    parts = []
    for piece in _TEMPLATE.split(text)[1::2]:
        result = evaluate(parse(piece), context)
        if result is UNKNOWN:
            return UNKNOWN
        parts.append(result)
    it = iter(parts)
    return _TEMPLATE.sub(lambda _: str(next(it)), text)


def template_paths(value):
    if not isinstance(value, str):
        return set()
    return set().union(*(paths(parse(p)) for p in _TEMPLATE.findall(value))) if "${{" in value else set()
