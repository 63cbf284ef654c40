x = 1
if x:  # c
    y = r"\\" + \
        2
