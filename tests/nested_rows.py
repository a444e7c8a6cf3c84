"""Rows of a Spark DataFrame of (id, st struct, l list of structs, m map of structs) as plain
Python values, sorted: the shape the nested-type tests compare."""


def nested_rows(df) -> list:
    out = []
    for r in df.collect():
        out.append((r.id, None if r.st is None else tuple(r.st),
                    None if r.l is None else [None if e is None else tuple(e) for e in r.l],
                    None if r.m is None else {k: tuple(v) for k, v in r.m.items()}))
    return sorted(out)
