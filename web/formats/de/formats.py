"""German dates as the scripts write them: "10. März 2026", "10. März 2026, 14:05"."""

DATE_FORMAT = SHORT_DATE_FORMAT = "j. F Y"
DATETIME_FORMAT = SHORT_DATETIME_FORMAT = "j. F Y, H:i"
