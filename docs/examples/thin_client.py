"""A thin SyncHub client in 20 lines: join a board, pick letters, print states."""
import asyncio, json, sys
import websockets

async def main(url, letters):
    async with websockets.connect(url) as hub:
        print(json.loads(await hub.recv())["order"])          # first frame: the state
        for n, letter in enumerate(letters):
            await hub.send(json.dumps({"type": "select", "letter": letter, "ref": f"r{n}"}))
        answered, newest, shown = 0, 0, -1
        while answered < len(letters) or shown < newest:       # every answer, then a state that has them
            message = json.loads(await hub.recv())
            if message["type"] == "state":
                shown = message["version"]
                print("order:", " ".join(message["order"]), "| clients:", message["clients"])
            elif message["type"] in ("ack", "rejected"):
                answered += 1
                newest = max(newest, message.get("version", 0))
                print(message["type"], message["ref"], message.get("message", ""))

if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:] or ["C", "A", "B"]))
