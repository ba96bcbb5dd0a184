// kafkajs's producer and group consumer against zkafka: a gzip batch with headers, a group that consumes,
// commits and stops, then the same group resuming after the committed offsets. JSON on stdout's last line.
// argv[2]: {"brokers": [...], "topic": "t", "group": "g"}
const { Kafka, CompressionTypes, logLevel } = require('kafkajs')

const args = JSON.parse(process.argv[2])
const kafka = new Kafka({
  clientId: 'zkafka-test', brokers: args.brokers, logLevel: logLevel.ERROR, retry: { retries: 5 },
  logCreator: () => ({ namespace, log }) => console.error(namespace, JSON.stringify(log)),
})
const result = {}

function messages (from, to, headers) {
  const batch = []
  for (let i = from; i < to; i++) {
    batch.push({ key: `k${i}`, value: `v${i}`, partition: i % 2, ...(headers && { headers: { n: `${i}` } }) })
  }
  return batch
}

// Run the group until `count` messages arrived, then commit (kafkajs commits on stop) and leave.
async function consume (count) {
  const consumer = kafka.consumer({ groupId: args.group, maxWaitTimeInMs: 200 })
  await consumer.connect()
  await consumer.subscribe({ topics: [args.topic], fromBeginning: true })
  const seen = []
  await new Promise((resolve, reject) => {
    consumer.on(consumer.events.CRASH, ({ payload }) => reject(payload.error))
    consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen.push({ partition, offset: message.offset, key: message.key.toString(), value: message.value.toString(),
          headers: Object.fromEntries(Object.entries(message.headers || {}).map(([k, v]) => [k, v.toString()])) })
        if (seen.length >= count) resolve()
      },
    }).catch(reject)
  })
  await consumer.disconnect()
  return seen
}

async function main () {
  const producer = kafka.producer()
  await producer.connect()
  try {
    await producer.send({ topic: args.topic, messages: messages(100, 102, true) })
    result.headers = { ok: true }
  } catch (e) {
    result.headers = { ok: false, error: `${e.name}: ${e.message}`, type: e.type || null }
  }
  const sent = await producer.send({ topic: args.topic, compression: CompressionTypes.GZIP, messages: messages(0, 6) })
  result.produced = sent.map(r => [r.partition, r.errorCode, r.baseOffset])
  result.first = await consume(result.headers.ok ? 8 : 6)
  await producer.send({ topic: args.topic, messages: messages(6, 8) })
  await producer.disconnect()
  result.resumed = await consume(2)
  const admin = kafka.admin()
  await admin.connect()
  await admin.fetchTopicOffsets(args.topic) // kafkajs loads the topic's metadata here, not in deleteTopicRecords
  await admin.deleteTopicRecords({ topic: args.topic, partitions: [{ partition: 0, offset: '2' }] })
  result.offsets = (await admin.fetchTopicOffsets(args.topic)).map(o => [o.partition, o.low, o.high])
  await admin.disconnect()
}

main().then(
  () => { console.log(JSON.stringify(result)); process.exit(0) },
  e => { console.error(e); console.log(JSON.stringify({ ...result, fatal: `${e.name}: ${e.message}` })); process.exit(1) })
