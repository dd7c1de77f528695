package dev.tether.bench;

import java.lang.management.ManagementFactory;

import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import com.sun.management.ThreadMXBean;
import com.sun.tools.attach.VirtualMachine;

/**
 * The bytes a running daemon's threads have allocated on the heap so far, read over JMX from its platform
 * {@code ThreadMXBean} (the local management agent started in it through the attach API). Allocation per request
 * does not move with the load of a shared machine, so it is the figure to compare two builds by.
 */
final class DaemonAllocation implements AutoCloseable {

    private final JMXConnector connector;
    private final ThreadMXBean threads;

    private DaemonAllocation(JMXConnector connector, ThreadMXBean threads) {
        this.connector = connector;
        this.threads = threads;
    }

    static DaemonAllocation attach(long pid) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
        String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
        MBeanServerConnection server = connector.getMBeanServerConnection();
        return new DaemonAllocation(connector, ManagementFactory.newPlatformMXBeanProxy(server,
                ManagementFactory.THREAD_MXBEAN_NAME, ThreadMXBean.class));
    }

    /** Every thread's allocation since the daemon started, those that ended included. */
    long allocatedBytes() {
        return threads.getTotalThreadAllocatedBytes();
    }

    @Override
    public void close() throws Exception {
        connector.close();
    }
}
