from src.greet import greet


def test_greet(capsys):
    greet("x")
    assert capsys.readouterr().out == "hello, x\n"
