from zkafka.ui.guard import new_token, refusal, with_token

TOKEN = "t0ken"


def environ(method="POST", host="127.0.0.1:8080", **headers):
    return {"REQUEST_METHOD": method, "SERVER_PORT": "8080", "HTTP_HOST": host, **headers}


def test_a_post_needs_the_token_and_no_foreign_origin():
    assert refusal(environ(HTTP_X_ZKAFKA_TOKEN=TOKEN), TOKEN) is None
    assert refusal(environ(HTTP_X_ZKAFKA_TOKEN=TOKEN, HTTP_ORIGIN="http://localhost:8080"), TOKEN) is None
    assert "X-Zkafka-Token" in refusal(environ(), TOKEN)
    assert "X-Zkafka-Token" in refusal(environ(HTTP_X_ZKAFKA_TOKEN="t0ke"), TOKEN)
    assert "Origin" in refusal(environ(HTTP_X_ZKAFKA_TOKEN=TOKEN, HTTP_ORIGIN="http://evil.example"), TOKEN)
    assert "Origin" in refusal(environ(HTTP_X_ZKAFKA_TOKEN=TOKEN, HTTP_ORIGIN="http://127.0.0.1:9090"), TOKEN)


def test_every_request_must_name_this_view_as_its_host():
    assert refusal(environ("GET"), TOKEN) is None
    assert refusal(environ("GET", host="localhost:8080"), TOKEN) is None
    assert "Host" in refusal(environ("GET", host="evil.example:8080"), TOKEN)
    assert "Host" in refusal(environ("GET", host="127.0.0.1:9090"), TOKEN)
    assert "Host" in refusal({"REQUEST_METHOD": "GET", "SERVER_PORT": "8080"}, TOKEN)


def test_the_page_carries_a_fresh_token_per_run():
    first, second = new_token(), new_token()
    assert first != second and len(first) >= 32
    page = b'<head><meta name="zkafka-token" content=""></head>'
    assert with_token(page, first) == f'<head><meta name="zkafka-token" content="{first}"></head>'.encode()
