from utils import load, save


def test_round_trip(tmp_path):
    p = tmp_path / "d.json"
    save(p, {"a": 1})
    assert load(p) == {"a": 1}
