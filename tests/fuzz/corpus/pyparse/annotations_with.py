def f(a: List[int] | None, b: np.ndarray[int], c: "X", d: Dict[str, int], e: type[int], g: x.y[int]) -> Optional[List[int]]: pass
with (a, b): pass
with (a): pass
x: list[int] = []
def g():
    x = 1  # c
y
