UNITS = ["B", "KiB", "MiB", "GiB"]


def naturalsize(count):
    value = float(count)
    for unit in UNITS:
        if value <= 1024 or unit == UNITS[-1]:
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
