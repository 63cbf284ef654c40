"""Retail sales report with pandas: CSV load, group-by aggregation and joins.

Writes a synthetic sales CSV to a temporary directory, reads it back, aggregates
revenue per region and category, joins lookup tables, and scores rows with a
row-wise UDF. GPU port: `python -m cudf.pandas sales_groupby.py` (cudf.pandas),
then cuDF; the `apply(axis=1)` UDF and the `iterrows` loop fall back to pandas.
"""
import os
import tempfile

import numpy as np
import pandas as pd

REGIONS = ["north", "south", "east", "west"]


def write_sales_csv(path, n_rows=20000, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "date": pd.Timestamp("2024-01-01")
        + pd.to_timedelta(rng.integers(0, 365, n_rows), unit="D"),
        "store_id": rng.integers(1, 51, n_rows),
        "product_id": rng.integers(1, 201, n_rows),
        "units": rng.poisson(3, n_rows) + 1,
        "unit_price": rng.gamma(2.0, 10.0, n_rows).round(2),
    })
    frame.to_csv(path, index=False)


def lookup_tables(seed=1):
    rng = np.random.default_rng(seed)
    products = pd.DataFrame({
        "product_id": np.arange(1, 201),
        "category": rng.choice(["food", "toys", "garden", "tools"], 200),
    })
    stores = pd.DataFrame(
        {"region": rng.choice(REGIONS, 50), "floor_m2": rng.integers(200, 2000, 50)},
        index=pd.Index(np.arange(1, 51), name="store_id"),
    )
    return products, stores


def discount_score(row):
    """Arbitrary Python per row: the classic cudf.pandas CPU fallback."""
    if row["units"] >= 6 and row["unit_price"] > 30.0:
        return 0.15
    return 0.05 if row["category"] == "toys" else 0.0


def main():
    products, stores = lookup_tables()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sales.csv")
        write_sales_csv(path)
        sales = pd.read_csv(path, parse_dates=["date"])

    sales["revenue"] = sales["units"] * sales["unit_price"]
    sales = sales.merge(products, on="product_id", how="left")
    sales = sales.join(stores, on="store_id")
    sales["month"] = sales["date"].dt.month

    summary = (
        sales.groupby(["region", "category"])
        .agg(revenue=("revenue", "sum"), orders=("units", "size"),
             mean_price=("unit_price", "mean"))
        .reset_index()
        .sort_values("revenue", ascending=False)
    )
    monthly = sales.groupby("month")["revenue"].sum()

    sales["discount"] = sales.apply(discount_score, axis=1)
    saved = (sales["discount"] * sales["revenue"]).sum()

    best = {}
    for _, row in summary.iterrows():
        best.setdefault(row["region"], (row["category"], row["revenue"]))

    print(f"rows={len(sales)} columns={sales.shape[1]}")
    print(summary.head(4).to_string(index=False, float_format="%.1f"))
    print(f"best month: {monthly.idxmax()} ({monthly.max():.0f})")
    print(f"discount given: {saved:.2f}")
    for region in REGIONS:
        print(f"  {region}: top category {best[region][0]} ({best[region][1]:.0f})")


if __name__ == "__main__":
    main()
