//! Tensors over memory another framework owns (`HostBuffer::from_foreign`)
//! and the context's `ForeignForwarding` hook, with a fake framework: an
//! aligned block whose owner records when it is released.

use std::alloc::Layout;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use registry_core::kernel::{ForeignForwarding, Forwarded, KernelCall, KernelError, NodeInfo};
use registry_core::proto::DataType;
use registry_core::tensor::{HostBuffer, Tensor, TensorShape};

/// A 64-byte aligned block of another "framework", freed when dropped.
struct Block {
    ptr: *mut u8,
    layout: Layout,
    released: Arc<AtomicBool>,
}

// SAFETY: the block is plain memory, freed only by `Drop`.
unsafe impl Send for Block {}
// SAFETY: shared access does not touch the block.
unsafe impl Sync for Block {}

impl Drop for Block {
    fn drop(&mut self) {
        self.released.store(true, Ordering::SeqCst);
        // SAFETY: allocated with this layout in `block`, freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// A block of `len` bytes at `offset` past a 64-byte boundary, filled with
/// 1, 2, 3...; its address, and the flag set when it is released.
fn block(len: usize, offset: usize) -> (Block, *mut u8, Arc<AtomicBool>) {
    let layout = Layout::from_size_align(len + offset, 64).unwrap();
    // SAFETY: non-zero size.
    let ptr = unsafe { std::alloc::alloc(layout) };
    for i in 0..len + offset {
        // SAFETY: within the allocation.
        unsafe { *ptr.add(i) = ((i - i.min(offset)) as u8).wrapping_add(1) };
    }
    let released = Arc::new(AtomicBool::new(false));
    let data = ptr.wrapping_add(offset);
    (
        Block {
            ptr,
            layout,
            released: Arc::clone(&released),
        },
        data,
        released,
    )
}

#[test]
fn aligned_foreign_memory_is_held_without_a_copy_until_the_last_handle() {
    let (owner, data, released) = block(256, 0);
    // SAFETY: 256 bytes, freed only when the owner is dropped.
    let buffer = unsafe { HostBuffer::from_foreign(data, 256, false, Box::new(owner)) }.unwrap();
    assert_eq!(buffer.as_ptr(), data.cast_const());
    assert!(buffer.is_foreign() && !buffer.is_unique());
    let mut tensor = Tensor::from_host_buffer(DataType::DtUint8, [16, 16], buffer).unwrap();
    assert_eq!(tensor.as_slice::<u8>().unwrap()[..3], [1, 2, 3]);
    // Read-only: no in-place writes, even when this is the only handle.
    assert!(tensor.as_mut_slice::<u8>().is_err());
    let view = tensor.reshape([256]).unwrap();
    drop(tensor);
    assert!(
        !released.load(Ordering::SeqCst),
        "released while a view holds it"
    );
    drop(view);
    assert!(released.load(Ordering::SeqCst));
}

#[test]
fn writable_foreign_memory_is_written_in_place() {
    let (owner, data, _released) = block(128, 0);
    // SAFETY: 128 bytes, handed over for writing, freed with the owner.
    let buffer = unsafe { HostBuffer::from_foreign(data, 128, true, Box::new(owner)) }.unwrap();
    let mut tensor = Tensor::from_host_buffer(DataType::DtInt32, [32], buffer).unwrap();
    assert!(tensor.is_unique());
    tensor.as_mut_slice::<i32>().unwrap()[0] = -7;
    // SAFETY: the block lives while `tensor` does.
    assert_eq!(unsafe { data.cast::<i32>().read() }, -7);
    let copy = tensor.clone();
    assert!(!tensor.is_unique() && tensor.as_mut_slice::<i32>().is_err());
    drop(copy);
}

#[test]
fn small_or_misaligned_memory_is_copied_and_released_at_once() {
    for (len, offset) in [(16, 0), (100, 4)] {
        let (owner, data, released) = block(len, offset);
        // SAFETY: `len` bytes, freed only when the owner is dropped.
        let buffer =
            unsafe { HostBuffer::from_foreign(data, len, false, Box::new(owner)) }.unwrap();
        assert!(
            released.load(Ordering::SeqCst),
            "{len} bytes at +{offset}: owner kept"
        );
        assert!(!buffer.is_foreign() && buffer.is_unique());
        assert_eq!(buffer.as_bytes()[..3], [1, 2, 3]);
    }
    // SAFETY: no bytes; a null pointer is allowed for them.
    let empty =
        unsafe { HostBuffer::from_foreign(std::ptr::null(), 0, false, Box::new(())) }.unwrap();
    assert!(empty.is_empty());
}

#[test]
fn a_buffer_must_fit_its_shape() {
    let buffer = HostBuffer::zeroed(24).unwrap();
    let e = Tensor::from_host_buffer(DataType::DtFloat, [5], buffer.clone()).unwrap_err();
    assert!(
        e.to_string()
            .contains("[5] has 5 elements, but 6 values were given"),
        "{e}"
    );
    assert!(Tensor::from_host_buffer(DataType::DtString, [1], buffer.clone()).is_err());
    assert!(Tensor::from_host_buffer(DataType::DtInt8, [2, 12], buffer).is_ok());
}

/// A fake framework that hands over (or keeps) its buffers.
#[derive(Debug)]
struct Framework {
    grant: bool,
    asked: Arc<AtomicUsize>,
    preallocated: Option<Tensor>,
    zeroed: Vec<bool>,
}

impl ForeignForwarding for Framework {
    fn forward(
        &mut self,
        input: usize,
        output: usize,
        shape: &TensorShape,
    ) -> Result<Forwarded, KernelError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        assert_eq!((input, output), (0, 0));
        assert_eq!(shape.dims(), [8]);
        let fresh = Tensor::from_vec([8], vec![1.0f32; 8]).unwrap();
        Ok(if self.grant {
            Forwarded::Output(fresh)
        } else {
            Forwarded::Kept(fresh)
        })
    }

    fn allocated_output(
        &mut self,
        _index: usize,
        _dtype: DataType,
        _shape: &TensorShape,
        zeroed: bool,
    ) -> Result<Option<Tensor>, KernelError> {
        self.zeroed.push(zeroed);
        Ok(self.preallocated.take())
    }
}

fn foreign_input() -> Tensor {
    let (owner, data, _) = block(32, 0);
    // SAFETY: 32 bytes, freed only when the owner is dropped.
    let buffer = unsafe { HostBuffer::from_foreign(data, 32, false, Box::new(owner)) }.unwrap();
    Tensor::from_host_buffer(DataType::DtFloat, [8], buffer).unwrap()
}

#[test]
fn the_owner_of_a_foreign_input_decides_whether_it_is_forwarded() {
    let info = NodeInfo::new(
        "n",
        "Neg",
        "CPU",
        vec![DataType::DtFloat],
        vec![DataType::DtFloat],
    );
    for grant in [true, false] {
        let asked = Arc::new(AtomicUsize::new(0));
        let mut framework = Framework {
            grant,
            asked: Arc::clone(&asked),
            preallocated: None,
            zeroed: Vec::new(),
        };
        let mut call = KernelCall::new(&info, [foreign_input()]);
        let mut ctx = call.context(&info).with_foreign_forwarding(&mut framework);
        assert_eq!(ctx.forward_input(0, 0).unwrap(), grant);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        if grant {
            assert!(ctx.input(0).is_err(), "a forwarded input stays readable");
            assert_eq!(ctx.output(0).unwrap().as_slice::<f32>().unwrap(), &[1.0; 8]);
        } else {
            assert!(ctx.output(0).is_none());
            assert_eq!(ctx.input(0).unwrap().as_slice::<f32>().unwrap(), &[1.0; 8]);
        }
    }
    // Without the hook, a foreign input is never forwarded.
    let mut call = KernelCall::new(&info, [foreign_input()]);
    let mut ctx = call.context(&info);
    assert!(!ctx.forward_input(0, 0).unwrap());
}

#[test]
fn an_output_the_framework_allocated_is_what_allocate_output_gives() {
    let info = NodeInfo::new(
        "n",
        "Neg",
        "CPU",
        vec![DataType::DtFloat],
        vec![DataType::DtFloat],
    );
    let theirs = Tensor::from_vec([32], vec![5.0f32; 32]).unwrap();
    let mut framework = Framework {
        grant: false,
        asked: Arc::new(AtomicUsize::new(0)),
        preallocated: Some(theirs.clone()),
        zeroed: Vec::new(),
    };
    let mut call = KernelCall::new(&info, [Tensor::from_vec([32], vec![0.0f32; 32]).unwrap()]);
    let mut ctx = call.context(&info).with_foreign_forwarding(&mut framework);
    let out = ctx.allocate_output(0, [32]).unwrap();
    assert!(out.shares_buffer_with(&theirs));
    // Once used, allocation is the context's own again.
    let again = ctx.allocate_output_to_overwrite(0, [32]).unwrap();
    assert!(!again.shares_buffer_with(&theirs));
    // The framework is told whether the kernel needs zeros.
    assert_eq!(framework.zeroed, [true, false]);
}
