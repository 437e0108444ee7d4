"""The base of every result type: a dataclass built from one JSON object of the tool.

Each field is a key of the JSON (a key that is no Python name, like "pass", is spelled `pass_` and
names its key in the field's metadata). Nested objects become their own record types, lists of
them lists. Keys this version of the package does not know are kept in `extra`, so that a newer
binary's output is never lost; a key the binary did not write is None.
"""
import dataclasses
import typing
from typing import Any, Dict, List

_HINTS = {}

def _hints(cls):
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]

def key_of(f):
    return f.metadata.get("json", f.name)

def json_field(key, default=None):
    """A field whose JSON key is not its Python name (`pass_ = json_field("pass")`)."""
    return dataclasses.field(default=default, metadata={"json": key})

def _strip_optional(hint):
    if typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return hint

def _convert(hint, value):
    if value is None:
        return None
    hint = _strip_optional(hint)
    origin = typing.get_origin(hint)
    if origin in (list, List) and isinstance(value, list):
        (item,) = typing.get_args(hint) or (Any,)
        return [_convert(item, v) for v in value]
    if isinstance(hint, type) and issubclass(hint, Record) and isinstance(value, dict):
        return hint.from_json(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value

def _to_json(value):
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    return value

@dataclasses.dataclass
class Record:
    extra: Dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data):
        """The record of one JSON object (a dict, as json.loads gives it)."""
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        hints = _hints(cls)
        by_key = {key_of(f): f for f in dataclasses.fields(cls) if f.name != "extra"}
        values, extra = {}, {}
        for key, value in data.items():
            f = by_key.get(key)
            if f is None:
                extra[key] = value
            else:
                values[f.name] = _convert(hints[f.name], value)
        record = cls(**values)
        record.extra = extra
        record._json_keys = list(data)
        return record

    def to_dict(self):
        """The JSON object again, its keys in their order: for a record read from JSON the keys it
        had, for one made in Python every field; the keys kept in `extra` with them."""
        fields = {key_of(f): f.name for f in dataclasses.fields(self) if f.name != "extra"}
        keys = getattr(self, "_json_keys", None) or list(fields) + list(self.extra)
        return {key: _to_json(getattr(self, fields[key])) if key in fields else self.extra[key]
                for key in keys if key in fields or key in self.extra}

def unknown_keys(record, path=""):
    """Every JSON key, anywhere in `record`, that no field declares: "points[3].point.new_key"."""
    found = [f"{path}.{k}".lstrip(".") for k in record.extra]
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if isinstance(value, Record):
            found += unknown_keys(value, f"{path}.{key_of(f)}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, Record):
                    found += unknown_keys(item, f"{path}.{key_of(f)}[{i}]")
    return found
