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
# cuDF 26.10 has no cudf.isna / cudf.qcut / cudf.read_excel: pandas runs them on the CPU
missing = pd.isna(sales)  # expect: GPU206/-
missing2 = sales.isna()  # expect: GPU103/cudf.pandas
bins = pd.qcut(sales["amount"], 4)  # expect: GPU206/-
sheet = pd.read_excel("sales.xlsx")  # expect: GPU206/-
feather = pd.read_feather("sales.feather")  # expect: GPU103/cudf.pandas
