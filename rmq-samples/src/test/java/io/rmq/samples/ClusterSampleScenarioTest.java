package io.rmq.samples;

import io.rmq.test.context.RmqTest;

/** The sample scenario on a 3-master Redis Cluster. */
@RmqTest(topology = RmqTest.Topology.CLUSTER)
class ClusterSampleScenarioTest extends SampleScenarioTestSupport {
}
