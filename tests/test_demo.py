"""The README's first command: every algorithm runs on the bundled data and the table is sane."""

from skcoreset._demo import ALGORITHMS, main, run


def test_demo_table(capsys):
    lines = []
    rows = run(sizes=(30,), print_fn=lines.append)
    assert [r["algorithm"] for r in rows] == list(ALGORITHMS)
    by_name = {r["algorithm"]: r for r in rows}
    assert all(1 <= r["size"] <= 30 for r in rows)
    # the optimising methods beat uniform on both the projection error and the posterior KL
    for name in ["giga", "a-iht-ii", "omp"]:
        assert by_name[name]["hilbert_error"] < by_name["uniform"]["hilbert_error"]
        assert by_name[name]["kl"] < by_name["uniform"]["kl"]
    assert len(lines) == 2 + len(rows)
    main(["--sizes", "5"])
    assert "omp" in capsys.readouterr().out
