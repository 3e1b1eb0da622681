def main() -> None:
    print("felt")
