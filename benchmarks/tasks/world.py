"""The executable world of the evaluation: a shop's records, inventory, tax and shipping, plus the demo tools.

The data is generated from a fixed seed, so every run of every style sees the
same 80 products, 60 customers and 240 orders. A :class:`World` is made fresh
for each run (``make_world``); it holds that data and the run's counters,
which is what makes ``warehouse_stock`` fail exactly once per run (the
recovery task) and lets oracles inspect what a run did.

``world_tools`` gives 9 world tools plus the 8 demo tools (files, notes, units)
bound to the workspace: 17 tools, so with the MCP time server's 2 tools a
catalog of 20 still holds one filler.
"""

from __future__ import annotations

import collections
import functools
import random
from pathlib import Path
from typing import Any

import attrs

from hookspecs.reference.demo_tools import demo_tool_definitions
from hookspecs.services import ToolContext, ToolDefinition, ToolFailure, tool
from hookspecs.types import JSONObject, JSONValue

SEED = 15
"""The data seed; changing it changes every answer, so it is part of the suite's version."""

CATEGORIES = ("headphones", "keyboards", "monitors", "mice", "webcams", "speakers", "chargers", "cables")
COUNTRIES = ("DE", "FR", "NL", "ES", "IT", "SE", "PL", "GB", "US", "JP")
STATUSES = ("pending", "paid", "shipped", "delivered", "returned", "cancelled")
WAREHOUSES = ("berlin", "rotterdam", "warsaw")
TAX_RATES = {
    "DE": 0.19,
    "FR": 0.20,
    "NL": 0.21,
    "ES": 0.21,
    "IT": 0.22,
    "SE": 0.25,
    "PL": 0.23,
    "GB": 0.20,
    "US": 0.0,
    "JP": 0.10,
}
"""Standard VAT (consumption tax) rates by country; the US has no federal VAT."""
SHIPPING_ZONES = {"DE": 1, "NL": 1, "PL": 1, "FR": 2, "ES": 2, "IT": 2, "SE": 2, "GB": 3, "US": 4, "JP": 4}
SHIPPING_TARIFF = {1: (4.90, 0.80), 2: (7.90, 1.10), 3: (12.50, 1.60), 4: (24.00, 3.20)}
"""Zone → (base price, price per started kilogram), in EUR."""

_ADJECTIVES = ("Aero", "Nova", "Pulse", "Zen", "Orbit", "Quartz", "Echo", "Vivid", "Atlas", "Lumen", "Drift", "Prime")
_FIRST = ("Anna", "Ben", "Clara", "David", "Elena", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Luca")
_LAST = ("Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Horvat", "Ito", "Jansen", "Kowalski", "Lindqvist")


@attrs.frozen(kw_only=True)
class ShopData:
    """The generated records: plain JSON-shaped dicts keyed by id (tools return copies)."""

    products: dict[str, dict[str, Any]]
    customers: dict[str, dict[str, Any]]
    orders: dict[str, dict[str, Any]]
    stock: dict[str, dict[str, int]]


@functools.cache
def shop_data() -> ShopData:
    """The one deterministic data set (same on every call, every run, every machine)."""
    rng = random.Random(SEED)
    products: dict[str, dict[str, Any]] = {}
    for i in range(1, 81):
        category = CATEGORIES[(i - 1) % len(CATEGORIES)]
        pid = f"p-{i:03d}"
        products[pid] = {
            "id": pid,
            "name": f"{rng.choice(_ADJECTIVES)} {category[:-1].title()} {100 + i}",
            "category": category,
            "price": round(rng.uniform(9.0, 480.0), 2),
            "rating": round(rng.uniform(2.8, 5.0), 1),
            "reviews": rng.randint(3, 2400),
            "weight_kg": round(rng.uniform(0.1, 7.5), 2),
        }
    customers: dict[str, dict[str, Any]] = {}
    for i in range(1, 61):
        cid = f"c-{i:03d}"
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        customers[cid] = {
            "id": cid,
            "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}{i}@example.com",
            "country": rng.choice(COUNTRIES),
            "tier": rng.choices(("standard", "silver", "gold"), weights=(6, 3, 2))[0],
        }
    orders: dict[str, dict[str, Any]] = {}
    for i in range(1, 241):
        oid = f"o-{i:04d}"
        items = []
        for product_id in rng.sample(sorted(products), rng.randint(1, 4)):
            items.append(
                {"product_id": product_id, "quantity": rng.randint(1, 3), "unit_price": products[product_id]["price"]}
            )
        month, day = divmod(i - 1, 24)
        orders[oid] = {
            "id": oid,
            "customer_id": f"c-{rng.randint(1, 60):03d}",
            "created": f"2026-{month + 1:02d}-{day + 1:02d}",
            "status": rng.choices(STATUSES, weights=(2, 2, 3, 8, 2, 1))[0],
            "items": items,
            "total": round(sum(item["quantity"] * item["unit_price"] for item in items), 2),
        }
    stock = {pid: {w: rng.randint(0, 60) for w in WAREHOUSES} for pid in products}
    return ShopData(products=products, customers=customers, orders=orders, stock=stock)


@attrs.define(kw_only=True)
class World:
    """One run's world: the shared data, the workspace and what the run did to the services."""

    workspace: Path
    data: ShopData
    calls: collections.Counter[str] = attrs.field(factory=collections.Counter)
    """Calls that reached each world tool's body (failed ones included)."""
    stock_failed: bool = False
    """Whether ``warehouse_stock`` already had its one failure this run."""
    child_calls: collections.Counter[str] = attrs.field(factory=collections.Counter)
    """Of :attr:`calls`, those a child session made (its caller's session is not its family's root): how an
    oracle sees that work was delegated."""

    def record(self, tool: str, context: ToolContext) -> None:
        """Count a call of ``tool`` that reached its body, and whether a child session made it."""
        self.calls[tool] += 1
        caller = context.call.caller
        if caller.session_id != caller.family_id:
            self.child_calls[tool] += 1


def make_world(workspace: Path) -> World:
    """A fresh world for one run in ``workspace``."""
    return World(workspace=Path(workspace), data=shop_data())


def shipping_price(country: str, weight_kg: float) -> float:
    """The tariff ``shipping_quote`` applies (kilograms rounded up, at least one)."""
    base, per_kg = SHIPPING_TARIFF[SHIPPING_ZONES[country]]
    started = max(1, -int(-weight_kg // 1))
    return round(base + per_kg * started, 2)


def _string(description: str, **extra: JSONValue) -> JSONObject:
    return {"type": "string", "description": description, **extra}


def _object(properties: JSONObject, required: list[JSONValue]) -> JSONObject:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _copy(record: dict[str, Any]) -> JSONValue:
    value: JSONValue = {k: ([dict(i) for i in v] if isinstance(v, list) else v) for k, v in record.items()}
    return value


def world_tools(workspace: Path, world: World) -> list[ToolDefinition]:
    """The executable tools over ``world``: the shop's 9 tools, then the demo tools bound to ``workspace``."""
    data = world.data

    def lookup(table: dict[str, dict[str, Any]], key: str, what: str) -> JSONValue:
        if key not in table:
            raise ToolFailure("not-found", f"no {what} with id {key!r}")
        return _copy(table[key])

    @tool(
        "list_order_ids",
        description="List the ids of orders in the shop's records, oldest first, "
        "optionally only those of one customer and/or with one status.",
        input_schema=_object(
            {
                "customer_id": _string("Only orders of this customer (e.g. 'c-007')."),
                "status": _string("Only orders with this status.", enum=list(STATUSES)),
                "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 500},
            },
            [],
        ),
        output_schema=_object({"order_ids": {"type": "array", "items": {"type": "string"}}}, ["order_ids"]),
    )
    async def list_order_ids(args: JSONObject, ctx: ToolContext) -> JSONValue:
        world.record("list_order_ids", ctx)
        ids: list[JSONValue] = [
            oid
            for oid, order in data.orders.items()
            if args.get("customer_id") in (None, order["customer_id"]) and args.get("status") in (None, order["status"])
        ]
        return {"order_ids": ids[: int(str(args.get("limit", 500)))]}

    @tool(
        "get_order",
        description="Get one order by id: customer, date, status, line items (product, quantity, unit price) "
        "and total in EUR.",
        input_schema=_object({"order_id": _string("The order id, e.g. 'o-0042'.")}, ["order_id"]),
        output_schema={
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "customer_id": {"type": "string"},
                "created": {"type": "string"},
                "status": {"type": "string"},
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "product_id": {"type": "string"},
                            "quantity": {"type": "integer"},
                            "unit_price": {"type": "number"},
                        },
                    },
                },
                "total": {"type": "number"},
            },
        },
    )
    async def get_order(args: JSONObject, ctx: ToolContext) -> JSONValue:
        world.record("get_order", ctx)
        return lookup(data.orders, str(args["order_id"]), "order")

    @tool(
        "get_customer",
        description="Get one customer by id: name, email, country (ISO code) and loyalty tier.",
        input_schema=_object({"customer_id": _string("The customer id, e.g. 'c-007'.")}, ["customer_id"]),
    )
    async def get_customer(args: JSONObject, ctx: ToolContext) -> JSONValue:
        world.record("get_customer", ctx)
        return lookup(data.customers, str(args["customer_id"]), "customer")

    @tool(
        "search_customers",
        description="Find customers by country and/or a part of their name; returns ids and names only.",
        input_schema=_object(
            {
                "country": _string("ISO country code, e.g. 'DE'.", enum=list(COUNTRIES)),
                "name": _string("Part of the customer's name (case-insensitive)."),
            },
            [],
        ),
    )
    async def search_customers(args: JSONObject, ctx: ToolContext) -> JSONValue:
        world.record("search_customers", ctx)
        name = str(args.get("name", "")).lower()
        found: list[JSONValue] = [
            {"id": c["id"], "name": c["name"]}
            for c in data.customers.values()
            if args.get("country") in (None, c["country"]) and name in c["name"].lower()
        ]
        return {"customers": found}

    @tool(
        "get_product",
        description="Get one product by id: name, category, price in EUR, average rating (1-5), "
        "number of reviews and shipping weight in kg.",
        input_schema=_object({"product_id": _string("The product id, e.g. 'p-012'.")}, ["product_id"]),
    )
    async def get_product(args: JSONObject, ctx: ToolContext) -> JSONValue:
        world.record("get_product", ctx)
        return lookup(data.products, str(args["product_id"]), "product")

    @tool(
        "search_products",
        description="Find products in the catalog by category and/or a word of their name; "
        "returns ids and names only (use get_product for prices and ratings).",
        input_schema=_object(
            {
                "category": _string("Product category.", enum=list(CATEGORIES)),
                "query": _string("A word of the product name (case-insensitive)."),
            },
            [],
        ),
    )
    async def search_products(args: JSONObject, ctx: ToolContext) -> JSONValue:
        world.record("search_products", ctx)
        query = str(args.get("query", "")).lower()
        found: list[JSONValue] = [
            {"id": p["id"], "name": p["name"]}
            for p in data.products.values()
            if args.get("category") in (None, p["category"]) and query in p["name"].lower()
        ]
        return {"products": found}

    @tool(
        "warehouse_stock",
        description="Units of a product in stock in each warehouse (berlin, rotterdam, warsaw), from the "
        "inventory service.",
        input_schema=_object({"product_id": _string("The product id, e.g. 'p-012'.")}, ["product_id"]),
    )
    async def warehouse_stock(args: JSONObject, ctx: ToolContext) -> JSONValue:
        world.record("warehouse_stock", ctx)
        if not world.stock_failed:
            # The inventory service's first answer of every run is an outage: the recovery task's error.
            world.stock_failed = True
            raise ToolFailure("unavailable", "inventory service temporarily unavailable (503); try again")
        product_id = str(args["product_id"])
        if product_id not in data.stock:
            raise ToolFailure("not-found", f"no product with id {product_id!r}")
        stock: JSONValue = {"product_id": product_id, "warehouses": dict(data.stock[product_id])}
        return stock

    @tool(
        "tax_rate",
        description="The standard VAT / consumption tax rate of a country, as a fraction (0.19 = 19 %).",
        input_schema=_object({"country": _string("ISO country code, e.g. 'DE'.", enum=list(COUNTRIES))}, ["country"]),
    )
    async def tax_rate(args: JSONObject, ctx: ToolContext) -> JSONValue:
        world.record("tax_rate", ctx)
        country = str(args["country"])
        return {"country": country, "standard_rate": TAX_RATES[country]}

    @tool(
        "shipping_quote",
        description="Quote standard parcel shipping from our warehouse to a country for a total weight; price in EUR.",
        input_schema=_object(
            {
                "country": _string("Destination ISO country code.", enum=list(COUNTRIES)),
                "weight_kg": {"type": "number", "exclusiveMinimum": 0, "description": "Total parcel weight in kg."},
            },
            ["country", "weight_kg"],
        ),
    )
    async def shipping_quote(args: JSONObject, ctx: ToolContext) -> JSONValue:
        world.record("shipping_quote", ctx)
        country, weight = str(args["country"]), float(str(args["weight_kg"]))
        return {
            "country": country,
            "weight_kg": weight,
            "service": "standard",
            "price": shipping_price(country, weight),
            "currency": "EUR",
        }

    shop = [
        list_order_ids,
        get_order,
        get_customer,
        search_customers,
        get_product,
        search_products,
        warehouse_stock,
        tax_rate,
        shipping_quote,
    ]
    return [*shop, *demo_tool_definitions(Path(workspace))]


MCP_TOOL_NAMES = frozenset({"get_current_time", "convert_time"})
"""The real MCP time server's tools, which the engine adds as host tools."""
ENGINE_TOOL_NAMES = frozenset({"agent", "tool_search", "run_code"})
"""Tools the engine or the plugin adds; filler never takes these names."""
