package io.rmq.samples;

import io.rmq.test.context.RmqTest;

/** The sample scenario on a standalone Redis. */
@RmqTest(topology = RmqTest.Topology.STANDALONE)
class StandaloneSampleScenarioTest extends SampleScenarioTestSupport {
}
