"""A unit converter for length, mass, time and temperature."""

from __future__ import annotations

from hookspecs.services import ToolContext, ToolDefinition, ToolFailure, tool
from hookspecs.types import Concurrency, JSONObject, JSONValue

# Factors to the base unit of each dimension (metre, kilogram, second).
_FACTORS: dict[str, dict[str, float]] = {
    "length": {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "mi": 1609.344},
    "mass": {"g": 0.001, "kg": 1.0, "lb": 0.45359237, "oz": 0.028349523125},
    "time": {"s": 1.0, "min": 60.0, "h": 3600.0, "day": 86400.0},
}
_TEMPERATURE = ("C", "F", "K")


def _to_kelvin(value: float, unit: str) -> float:
    return {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[unit]


def _from_kelvin(value: float, unit: str) -> float:
    return {"C": value - 273.15, "F": (value - 273.15) * 9 / 5 + 32, "K": value}[unit]


def convert(value: float, source: str, target: str) -> float:
    if source in _TEMPERATURE and target in _TEMPERATURE:
        return _from_kelvin(_to_kelvin(value, source), target)
    for factors in _FACTORS.values():
        if source in factors and target in factors:
            return value * factors[source] / factors[target]
    raise ToolFailure("incompatible-units", f"cannot convert {source} to {target}")


def unit_tools() -> list[ToolDefinition]:
    units = sorted({u for f in _FACTORS.values() for u in f} | set(_TEMPERATURE))

    async def convert_units(args: JSONObject, ctx: ToolContext) -> JSONValue:
        result = convert(float(args["value"]), str(args["from_unit"]), str(args["to_unit"]))
        return {"value": round(result, 10), "unit": args["to_unit"]}

    return [
        tool(
            name="convert_units",
            description="Convert a value between units of length, mass, time or temperature.",
            input_schema={
                "type": "object",
                "properties": {
                    "value": {"type": "number"},
                    "from_unit": {"type": "string", "enum": units},
                    "to_unit": {"type": "string", "enum": units},
                },
                "required": ["value", "from_unit", "to_unit"],
                "additionalProperties": False,
            },
            output_schema={
                "type": "object",
                "properties": {"value": {"type": "number"}, "unit": {"type": "string"}},
                "required": ["value", "unit"],
            },
            concurrency=Concurrency.PARALLEL,
        )(convert_units)
    ]
