"""ftlab.bounds and ftlab.admit return what `ftlab bounds/admit -f json` print."""

import ftlab


def test_bounds_of_a_chip():
    b = ftlab.bounds("small-slc")
    assert {"ideal", "fsr", "gftl", "rftl", "lazy_rtgc", "lazy_rtgc_ondemand"} <= set(b)
    assert b["gftl"]["max_read_us"] > 0
    ftls = {row["ftl"] for row in b["as_run"]}
    assert "gftl" in ftls
    assert all(0 < row["space_utilization"] <= 1 for row in b["as_run"])


TASKS = [
    {"name": "a", "read_pages": 1, "read_period_ms": 10.0, "write_pages": 1, "write_period_ms": 10.0, "lifetime_ms": 100.0},
    {"name": "b", "read_pages": 1, "read_period_ms": 20.0, "write_pages": 1, "write_period_ms": 20.0, "lifetime_ms": 100.0},
]


def test_admit_a_task_list_and_a_file(tmp_path):
    a = ftlab.admit(TASKS, policy="sip", chip="telomere-1tb-ssd")
    assert a["policy"] == "sip"
    assert [t["name"] for t in a["tasks"]] == ["a", "b"]
    assert a["admitted"] == 2 and a["refused"] == 0
    path = tmp_path / "tasks.toml"
    path.write_text(
        "\n".join(
            "[[task]]\n" + "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in t.items()) for t in TASKS
        )
    )
    assert ftlab.admit(str(path), policy="sip", chip="telomere-1tb-ssd")["tasks"] == a["tasks"]
    sharp = ftlab.admit(TASKS, policy="sharp", chip="telomere-1tb-ssd")
    assert sharp["policy"] == "sharp" and sharp["partitions"]
