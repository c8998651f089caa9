"""English dates as the scripts write them: "March 10, 2026", "March 10, 2026, 14:05"."""

DATE_FORMAT = SHORT_DATE_FORMAT = "F j, Y"
DATETIME_FORMAT = SHORT_DATETIME_FORMAT = "F j, Y, H:i"
