import numpy as np
π = np.pi
λ = lambda x: np.sin(x)
# é
np.ones(3); 変数 = np.zeros(2)
