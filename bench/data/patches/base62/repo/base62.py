ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def encode(number):
    out = ""
    while number:
        number, digit = divmod(number, 62)
        out = ALPHABET[digit] + out
    return out


def decode(text):
    number = 0
    for char in text:
        number = number * 62 + ALPHABET.index(char)
    return number
