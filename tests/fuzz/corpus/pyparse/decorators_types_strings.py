# lead comment

@dec
@a.b(1)  # c
def g(*, a, b: List[int] = None, /, **k):
    x: int | None
    y: a.b.C = "s\n\q{{" 
    # trailing comment

# outer
class C(B, metaclass=M):
    def h(self): return lambda a, *b: a

with (open(a) as f, open(b) as g):
    pass
z = {1: 2, **d}; s = {1, *e}
q = a[1:2, ::3, :, i]
if a not in b and c is not d: yield
f"{{x}} {y=}"
b"\u1234" rb"\x"
