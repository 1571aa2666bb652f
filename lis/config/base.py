"""What every params section model shares: closed (an unknown key is an error), strict (no
coercion the JSON schema would not allow), frozen (a consumer changes a copy: ``model_copy(update=...)``), documented by attribute docstrings (they become the
schema's descriptions), and the small constrained types the sections use."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class Section(BaseModel):
    """A params section (or a block inside one)."""

    model_config = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True,
                              validate_default=False, frozen=True)


PosInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
PosFloat = Annotated[float, Field(gt=0)]
NonNegFloat = Annotated[float, Field(ge=0)]
Share = Annotated[float, Field(ge=0, le=1)]
Auto = Literal["auto", True, False]
Domain = Literal["math", "physics", "chem", "biomed", "long_context", "instruct_follow", "instruct_pretrain"]
StageBackend = Literal["docker", "bwrap", "auto", None]
