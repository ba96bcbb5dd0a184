// kafkajs's admin client against zkafka: each step's result or error, as JSON on the last line of stdout.
// argv[2]: {"brokers": ["127.0.0.1:9092"], "topic": "t", "replicationFactor": 1}
const { Kafka, logLevel } = require('kafkajs')

const args = JSON.parse(process.argv[2])
const kafka = new Kafka({
  clientId: 'zkafka-test', brokers: args.brokers, logLevel: logLevel.ERROR, retry: { retries: 3 },
  logCreator: () => ({ namespace, log }) => console.error(namespace, JSON.stringify(log)),
})
const admin = kafka.admin()
const steps = {}

async function step (name, action) {
  try {
    steps[name] = { ok: true, value: await action() }
  } catch (e) {
    steps[name] = { ok: false, error: `${e.name}: ${e.message}`, type: e.type || null }
  }
}

const topicConfig = { type: 2, name: args.topic }
const configsOf = async () => {
  const described = await admin.describeConfigs({ resources: [topicConfig], includeSynonyms: false })
  const entries = described.resources[0].configEntries
  return Object.fromEntries(entries.map(e => [e.configName, [e.configValue, e.isDefault]]))
}

async function main () {
  await admin.connect()
  await step('createTopics', () => admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic: args.topic, numPartitions: 2, replicationFactor: args.replicationFactor,
      configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
  }))
  await step('createTopicsAgain', () => admin.createTopics({ topics: [{ topic: args.topic }] }))
  await step('createPartitions', () => admin.createPartitions({ topicPartitions: [{ topic: args.topic, count: 3 }] }))
  await step('fetchTopicMetadata', async () => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [args.topic] })
    return topics[0].partitions.map(p => p.partitionId).sort()
  })
  await step('describeConfigs', configsOf)
  await step('alterConfigs', () => admin.alterConfigs({
    validateOnly: false,
    resources: [{ ...topicConfig, configEntries: [{ name: 'retention.ms', value: '7200000' }] }],
  }))
  await step('describeAltered', configsOf)
  await step('alterUnknown', () => admin.alterConfigs({
    resources: [{ ...topicConfig, configEntries: [{ name: 'no.such.key', value: '1' }] }],
  }))
  await step('deleteTopics', () => admin.deleteTopics({ topics: [args.topic], timeout: 20000 }))
  await step('listTopics', () => admin.listTopics())
  await admin.disconnect()
}

main().then(
  () => { console.log(JSON.stringify(steps)); process.exit(0) },
  e => { console.error(e); console.log(JSON.stringify({ ...steps, fatal: `${e.name}: ${e.message}` })); process.exit(1) })
