"""Pure pieces of running beyond one machine: an ensemble's server lines, a member's myid, an executor's name."""

from zkafka.launch.zookeeper_server import quorum_servers, read_myid
from zkafka.spark.session import executor_name


def test_quorum_servers_are_the_server_n_lines_by_id():
    settings = {"tickTime": "2000", "server.2": "zk2:2888:3888", "server.10": "zk10:2888:3888", "server.x": "no"}
    assert quorum_servers(settings) == {2: "zk2:2888:3888", 10: "zk10:2888:3888"}
    assert quorum_servers({"clientPort": "2181"}) == {}


def test_read_myid(tmp_path):
    assert read_myid(str(tmp_path)) is None
    (tmp_path / "myid").write_text("3\n")
    assert read_myid(str(tmp_path)) == 3


def test_executor_name_from_a_standalone_log_url_else_as_given():
    url = "http://127.0.0.1:43719/logPage/?appId=app-20261126045755-0000&executorId=1&logType=stderr"
    assert executor_name(url) == "executor 1 on 127.0.0.1:43719"
    assert executor_name("vm/127.0.1.1") == "vm/127.0.1.1"
