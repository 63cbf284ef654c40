import pandas as pd

sales = pd.read_csv("sales.csv")  # expect: GPU103/cudf.pandas
regions = pd.DataFrame({"region": ["n", "s"], "manager": ["a", "b"]})  # expect: GPU103/cudf.pandas
by_region = sales.groupby("region").agg({"amount": "sum"})  # expect: GPU103/cudf.pandas GPU103/cudf.pandas
joined = sales.merge(regions, on="region")  # expect: GPU103/cudf.pandas
scored = sales.apply(lambda r: r["amount"] * 2, axis=1)  # expect: GPU301/-
cols = sales.apply(sum, axis=0)  # expect: GPU103/cudf.pandas
for idx, row in sales.iterrows():  # expect: GPU206/-
    pass
for row in joined.itertuples():  # expect: GPU206/-
    pass
total = sales["amount"].sum()  # expect: GPU103/cudf.pandas
