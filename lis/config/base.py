"""What every params section model shares: closed (an unknown key is an error), strict (no
coercion the JSON schema would not allow), frozen (a consumer changes a copy: ``model_copy(update=...)``), documented by attribute docstrings (they become the
schema's descriptions), and the small constrained types the sections use."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


class Section(BaseModel):
    """A params section (or a block inside one)."""

    model_config = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True,
                              validate_default=False, frozen=True)

    def written(self) -> dict:
        """The keys params set, as a plain dict (defaults left out): what a manifest, a cache key or the
        image's content hash records, so that a default added to the model changes none of them."""
        return self.model_dump(mode="json", exclude_unset=True)


PosInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
PosFloat = Annotated[float, Field(gt=0)]
NonNegFloat = Annotated[float, Field(ge=0)]
Share = Annotated[float, Field(ge=0, le=1)]
Auto = Literal["auto", True, False]
Domain = Literal["math", "physics", "chem", "biomed", "long_context", "instruct_follow", "instruct_pretrain"]
StageBackend = Literal["docker", "bwrap", "auto", None]


def _distinct(items: list) -> list:
    seen = []
    for item in items:
        if item in seen:
            raise ValueError(f"{item!r} is listed twice")
        seen.append(item)
    return items


def unique(t):
    """A list type whose items are distinct (the schema's ``uniqueItems``)."""
    return Annotated[t, AfterValidator(_distinct), Field(json_schema_extra={"uniqueItems": True})]
