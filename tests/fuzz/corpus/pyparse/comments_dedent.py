def f():
    # lead
    x = 1  # c
        # deeper
    # same
# outer
    # back
y = 2   
@dec   
def g(): pass  # c
if a:
    if b:
        z
    # four
  # two
w
class K: pass   
