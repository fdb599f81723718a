"""A realistic shop database (categories, products, customers, orders, order items).

Built deterministically from a seed as portable SQL that SQLite and PostgreSQL
both accept, so the same questions can be asked of both. Used by the tests and
by ``bench/sql_execution.py`` (which asks for a bigger one).
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

SCHEMA = """
CREATE TABLE categories (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category_id INTEGER NOT NULL REFERENCES categories(id),
    price NUMERIC(10, 2) NOT NULL,
    discontinued INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT,
    city TEXT,
    country TEXT NOT NULL,
    signup_date DATE NOT NULL
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    order_date DATE NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE order_items (
    order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL,
    unit_price NUMERIC(10, 2) NOT NULL,
    discount REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (order_id, product_id)
);
CREATE INDEX orders_by_customer ON orders(customer_id);
CREATE INDEX items_by_product ON order_items(product_id);
"""

CATEGORIES = ["Books", "Electronics", "Garden", "Kitchen", "Music", "Outdoors", "Toys", "Office"]
CITIES = {
    "France": ["Paris", "Lyon", "Lille"],
    "Germany": ["Berlin", "Munich", "Hamburg"],
    "Japan": ["Tokyo", "Osaka"],
    "Brazil": ["Sao Paulo", "Recife"],
    "Canada": ["Toronto", "Montreal", "Vancouver"],
}
STATUSES = ["delivered", "delivered", "delivered", "shipped", "cancelled", "pending"]
FIRST = [
    "Ana",
    "Ben",
    "Chloe",
    "Dmitri",
    "Elif",
    "Femi",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kai",
    "Lea",
]
LAST = [
    "Silva",
    "Martin",
    "Muller",
    "Tanaka",
    "Nguyen",
    "Okafor",
    "Smith",
    "Rossi",
    "Dubois",
    "Kim",
]


@dataclass(frozen=True)
class Size:
    customers: int = 120
    products: int = 40
    orders: int = 600


def seed_sql(size: Size = Size(), seed: int = 20240601) -> str:
    """INSERT statements for the whole database (portable SQL)."""
    rng = random.Random(seed)
    tables = [
        ("categories", [(i + 1, name) for i, name in enumerate(CATEGORIES)]),
        ("products", _products(rng, size)),
        ("customers", _customers(rng, size)),
    ]
    orders = _orders(rng, size)
    tables += [("orders", orders), ("order_items", _items(rng, size, orders))]
    return "\n".join(_insert(table, rows) for table, rows in tables)


def _products(rng: random.Random, size: Size) -> list[tuple[object, ...]]:
    rows = []
    for i in range(1, size.products + 1):
        price = round(rng.uniform(2, 400), 2)
        rows.append((i, f"Product {i:03d}", rng.randint(1, len(CATEGORIES)), price, int(rng.random() < 0.1)))
    return rows


def _customers(rng: random.Random, size: Size) -> list[tuple[object, ...]]:
    rows = []
    start = date(2021, 1, 1)
    for i in range(1, size.customers + 1):
        country = rng.choice(sorted(CITIES))
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        email = None if rng.random() < 0.15 else f"customer{i}@example.com"
        city = None if rng.random() < 0.1 else rng.choice(CITIES[country])
        signup = start + timedelta(days=rng.randint(0, 900))
        rows.append((i, name, email, city, country, signup.isoformat()))
    return rows


def _orders(rng: random.Random, size: Size) -> list[tuple[object, ...]]:
    start = date(2023, 1, 1)
    return [
        (
            i,
            rng.randint(1, size.customers),
            (start + timedelta(days=rng.randint(0, 540))).isoformat(),
            rng.choice(STATUSES),
        )
        for i in range(1, size.orders + 1)
    ]


def _items(rng: random.Random, size: Size, orders: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    rows = []
    for order in orders:
        for product in rng.sample(range(1, size.products + 1), rng.randint(1, 5)):
            discount = rng.choice([0.0, 0.0, 0.05, 0.1, 0.15])
            rows.append((order[0], product, rng.randint(1, 4), round(rng.uniform(2, 400), 2), discount))
    return rows


def _insert(table: str, rows: list[tuple[object, ...]]) -> str:
    statements = []
    for start in range(0, len(rows), 500):
        values = ",\n".join(
            "(" + ", ".join(_literal(v) for v in row) + ")" for row in rows[start : start + 500]
        )
        statements.append(f"INSERT INTO {table} VALUES\n{values};")
    return "\n".join(statements)


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def build_sqlite(path: Path, size: Size = Size()) -> Path:
    """Write the shop database to ``path`` (a new SQLite file)."""
    connection = sqlite3.connect(path)
    try:
        connection.executescript(SCHEMA + seed_sql(size))
        connection.commit()
    finally:
        connection.close()
    return path
