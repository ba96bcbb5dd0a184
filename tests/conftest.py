pytest_plugins = ["tests.zk_fixture", "tests.broker_fixture"]
