import numpy as np
s = 'ÿþ'
