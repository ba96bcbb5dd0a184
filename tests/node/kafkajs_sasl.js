// kafkajs over SASL/PLAIN against zkafka: produce and read back with the right password, then the error a
// wrong password gets. JSON on stdout's last line.
// argv[2]: {"brokers": [...], "topic": "t", "username": "alice", "password": "alice-secret"}
const { Kafka, logLevel } = require('kafkajs')

const args = JSON.parse(process.argv[2])
const client = (password, retries = 5) => new Kafka({
  clientId: 'zkafka-sasl', brokers: args.brokers, logLevel: logLevel.NOTHING, retry: { retries },
  sasl: { mechanism: 'plain', username: args.username, password },
})

async function main () {
  const result = {}
  const producer = client(args.password).producer()
  await producer.connect()
  await producer.send({ topic: args.topic, messages: [{ value: 'a' }, { value: 'b' }] })
  await producer.disconnect()
  const consumer = client(args.password).consumer({ groupId: 'sasl-g', maxWaitTimeInMs: 200 })
  await consumer.connect()
  await consumer.subscribe({ topics: [args.topic], fromBeginning: true })
  result.read = await new Promise((resolve, reject) => {
    const seen = []
    consumer.run({ eachMessage: async ({ message }) => { seen.push(message.value.toString()); if (seen.length >= 2) resolve(seen) } }).catch(reject)
  })
  await consumer.disconnect()
  try {
    const refused = client('wrong', 0).producer()
    await refused.connect()
    result.wrong = { ok: true }
  } catch (e) {
    result.wrong = { ok: false, type: e.type || e.name, message: e.message }
  }
  return result
}

main().then(
  r => { console.log(JSON.stringify(r)); process.exit(0) },
  e => { console.error(e); console.log(JSON.stringify({ fatal: `${e.name}: ${e.message}` })); process.exit(1) })
